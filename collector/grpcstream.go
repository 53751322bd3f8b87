package collector

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// streamFamilies are the families only gRPC stream probes feed
// (docs/metrics.md, "gRPC stream probes"): a stream is a WebSocket
// session's kin, opened and ended, and its messages are the attempts of
// the request families.
type streamFamilies struct {
	opened *prometheus.CounterVec
	ended  *prometheus.CounterVec
}

func newStreamFamilies() *streamFamilies {
	return &streamFamilies{
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "grpc_streams_total",
			Help:      "gRPC streams opened (success) or not, by outcome (timeout, refused, reset, tls, dns, other, generator: out of file descriptors). A stream that ended early is opened again, and counted again.",
		}, []string{"probe", "outcome"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "grpc_stream_ends_total",
			Help:      "gRPC streams that ended before their step did, by how: the status the server ended it with (OK, UNAVAILABLE…) or the failure that ended it (timeout: a message unanswered within the timeout; reset…).",
		}, []string{"probe", "end"}),
	}
}

func (f *streamFamilies) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.opened, f.ended}
}

func (f *streamFamilies) forget(l prometheus.Labels) {
	f.opened.DeletePartialMatch(l)
	f.ended.DeletePartialMatch(l)
}

// streamOutcomes is how a stream's opening can end: as a connection's.
var streamOutcomes = []result.Outcome{result.Success, result.Timeout, result.Refused, result.Reset,
	result.TLS, result.DNS, result.Other, result.Generator}

// streamLive is the part of Live that gRPC stream probes use; its series
// are created on the first stream, so another probe shows none of them.
type streamLive struct {
	families *streamFamilies
	opened   atomic.Pointer[[result.NumOutcomes]prometheus.Counter]
}

var _ live.Streams = (*Live)(nil)

// StreamOpened records one stream opening, every outcome's series at 0
// from the first so that rate() works.
func (l *Live) StreamOpened(o result.Outcome) {
	opened := l.streams.opened.Load()
	if opened == nil {
		opened = new([result.NumOutcomes]prometheus.Counter)
		for _, so := range streamOutcomes {
			opened[so] = l.streams.families.opened.WithLabelValues(l.probe, so.String())
		}
		if !l.streams.opened.CompareAndSwap(nil, opened) {
			opened = l.streams.opened.Load()
		}
	}
	if o >= result.NumOutcomes || opened[o] == nil {
		o = result.Other
	}
	opened[o].Inc()
}

// StreamEnded counts a stream that ended early by the server's status
// (a gRPC status: 17 values at most) or its failure's outcome.
func (l *Live) StreamEnded(o result.Outcome, code result.Code) {
	end := o.String()
	if code.Protocol == result.GRPC {
		end = code.String()
	}
	l.streams.families.ended.WithLabelValues(l.probe, end).Inc()
}
