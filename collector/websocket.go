package collector

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// wsFamilies are the families only WebSocket probes feed (docs/metrics.md,
// "WebSocket probes").
type wsFamilies struct {
	handshakes *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	closeCodes *prometheus.CounterVec
}

func newWSFamilies() *wsFamilies {
	return &wsFamilies{
		handshakes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "websocket_handshakes_total",
			Help:      "WebSocket sessions opened or refused, by how the handshake ended (success, http_error: the upgrade refused, timeout, refused, reset, tls, dns, other, generator: out of file descriptors). A session the server closed is opened again for the next attempt, and counted again.",
		}, []string{"probe", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace:                      namespace,
			Name:                           "websocket_handshake_duration_seconds",
			Help:                           "Duration of successful WebSocket handshakes (connect, TLS and the upgrade), in seconds.",
			Buckets:                        LatencyBuckets, // a connect and one HTTP exchange: the same range
			NativeHistogramBucketFactor:    nativeBucketFactor,
			NativeHistogramMaxBucketNumber: nativeMaxBuckets,
		}, []string{"probe"}),
		closeCodes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "websocket_close_codes_total",
			Help:      "Close frames WebSocket servers sent during an attempt (outcome closed), by close code (1013: try again later).",
		}, []string{"probe", "code"}),
	}
}

func (f *wsFamilies) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.handshakes, f.duration, f.closeCodes}
}

func (f *wsFamilies) forget(l prometheus.Labels) {
	f.handshakes.DeletePartialMatch(l)
	f.duration.DeletePartialMatch(l)
	f.closeCodes.DeletePartialMatch(l)
}

// wsChildren are one probe's resolved handshake series.
type wsChildren struct {
	outcomes [result.NumOutcomes]prometheus.Counter
	duration prometheus.Observer
}

// children resolves probe's handshake series, every outcome at 0 so that
// rate() works from the first handshake.
func (f *wsFamilies) children(probe string) *wsChildren {
	ch := &wsChildren{duration: f.duration.WithLabelValues(probe)}
	for o := result.Outcome(0); o < result.NumOutcomes; o++ {
		// A handshake ends before any session does, and its URL was
		// within the bound when the config loaded; a WebSocket probe has no
		// script.
		if o != result.Closed && o != result.TooLarge && o != result.ScriptFailed && o != result.Script {
			ch.outcomes[o] = f.handshakes.WithLabelValues(probe, o.String())
		}
	}
	return ch
}

// wsLive is the part of Live that WebSocket probes use; its series are
// created on the first handshake, so an HTTP probe shows none of them.
type wsLive struct {
	families *wsFamilies
	children atomic.Pointer[wsChildren]
}

var _ live.Handshakes = (*Live)(nil)

func (w *wsLive) get(probe string) *wsChildren {
	ch := w.children.Load()
	if ch == nil {
		ch = w.families.children(probe)
		if !w.children.CompareAndSwap(nil, ch) {
			ch = w.children.Load()
		}
	}
	return ch
}

// Handshake records one WebSocket handshake and, when it succeeded, its duration.
func (l *Live) Handshake(o result.Outcome, seconds float64) {
	ch := l.ws.get(l.probe)
	if o >= result.NumOutcomes || ch.outcomes[o] == nil {
		o = result.Other
	}
	ch.outcomes[o].Inc()
	if o == result.Success {
		ch.duration.Observe(seconds)
	}
}

// CloseCode counts a close frame a server sent during an attempt, under
// the probe's bounded code labels (docs/metrics.md, "Label values a
// target chooses").
func (l *Live) CloseCode(code int) {
	l.ws.families.closeCodes.WithLabelValues(l.probe, l.closeLabels.label(closeCode(code))).Inc()
}
