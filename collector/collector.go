package collector

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

const namespace = "loadprobe"

// Source gives the collector a consistent view of every configured probe at scrape time.
type Source interface{ Snapshot() []state.Probe }

// Latency buckets of the classic histograms: 100µs to 30s, about three per decade.
var (
	LatencyBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	SendDelayBuckets = []float64{.00001, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
)

// Native histogram settings: a bucket factor of 1.1 (schema 3, about 4%
// relative error) and at most 160 buckets, enough for 100µs–30s at full
// resolution; beyond that client_golang halves the resolution.
const (
	nativeBucketFactor = 1.1
	nativeMaxBuckets   = 160
)

// Collector owns every loadprobe_ metric family except the build and reload ones.
type Collector struct {
	requests    *prometheus.CounterVec
	responses   *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	inFlight    *prometheus.GaugeVec
	concurrency *prometheus.GaugeVec
	offeredRate *prometheus.GaugeVec
	dropped     *prometheus.CounterVec
	sendDelay   *prometheus.HistogramVec
	runs        *prometheus.CounterVec
	running     *prometheus.GaugeVec
	waited      *prometheus.CounterVec
	ws          *wsFamilies
	streams     *streamFamilies
	guards      *guardFamilies

	mu    sync.Mutex
	live  map[string]*Live
	steps map[[2]string]*Live // a flow's steps' recorders, by probe and step (step.go)
}

// New creates the collector of the live families and registers them on
// reg: it is the scheduler's Observer and hands each run its recorder.
// The families of the runs' results are read from the scheduler at scrape
// time (RegisterResults), once there is one.
func New(reg prometheus.Registerer) *Collector {
	c := &Collector{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "requests_total",
			Help:      "Attempts completed, by how they ended (success, http_error, timeout, refused, reset, tls, dns, other, for WebSocket probes closed, script_failed (a response the request's script failed), and the generator's own: generator (out of file descriptors), request_too_large (not sent: rendered above the size bound) and script (the request's script erred or ran out of its bounds)). Outcomes are mutually exclusive: their sum is the number of attempts.",
		}, []string{"probe", "outcome", "step"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "responses_total",
			Help:      "HTTP responses received, by status code. Attempts that got no response are in loadprobe_requests_total only.",
		}, []string{"probe", "code", "step"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace:                      namespace,
			Name:                           "request_duration_seconds",
			Help:                           "Latency of attempts that got a response (outcome success or http_error), in seconds; open-loop loads measure it from the intended send time.",
			Buckets:                        LatencyBuckets,
			NativeHistogramBucketFactor:    nativeBucketFactor,
			NativeHistogramMaxBucketNumber: nativeMaxBuckets,
		}, []string{"probe", "outcome", "step"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "in_flight_requests",
			Help:      "Requests sent and not yet answered, now.",
		}, []string{"probe"}),
		concurrency: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "concurrency",
			Help:      "Connections the closed-loop load asks for now (0 when idle).",
		}, []string{"probe"}),
		offeredRate: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "offered_rate",
			Help:      "Requests per second the open-loop load asks for now (0 when idle).",
		}, []string{"probe"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "dropped_requests_total",
			Help:      "Open loop: scheduled requests not sent because max_in_flight requests were already outstanding.",
		}, []string{"probe"}),
		sendDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace:                      namespace,
			Name:                           "send_delay_seconds",
			Help:                           "Open loop: how late each request left against its schedule, in seconds. A growing delay means the generator cannot keep up.",
			Buckets:                        SendDelayBuckets,
			NativeHistogramBucketFactor:    nativeBucketFactor,
			NativeHistogramMaxBucketNumber: nativeMaxBuckets,
		}, []string{"probe"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "runs_total",
			Help:      "Runs finished, by result (completed, aborted, failed, canceled).",
		}, []string{"probe", "result"}),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "running",
			Help:      "1 while a run of the probe is under way, else 0.",
		}, []string{"probe"}),
		waited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "run_wait_seconds_total",
			Help:      "Seconds runs spent waiting to start: for another probe against the same host to finish, or for room under max_concurrency / max_rate.",
		}, []string{"probe"}),
		ws:      newWSFamilies(),
		streams: newStreamFamilies(),
		guards:  newGuardFamilies(),
		live:    map[string]*Live{},
		steps:   map[[2]string]*Live{},
	}
	reg.MustRegister(
		c.requests, c.responses, c.duration, c.inFlight, c.concurrency,
		c.offeredRate, c.dropped, c.sendDelay, c.runs, c.running, c.waited,
	)
	reg.MustRegister(c.ws.collectors()...)
	reg.MustRegister(c.streams.collectors()...)
	reg.MustRegister(c.guards.collectors()...)
	return c
}

// Live returns the hot-path recorder of a probe, creating its series (all at
// 0) on first use. It returns the same recorder until the probe is forgotten.
func (c *Collector) Live(probe string) live.Sink {
	return c.get(probe)
}

// RunStarted marks a run of probe as under way.
func (c *Collector) RunStarted(probe string) {
	c.get(probe).running.Set(1)
}

// RunEnded marks the run of probe as finished with r and counts it.
func (c *Collector) RunEnded(probe string, r result.RunResult) {
	l := c.get(probe)
	l.running.Set(0)
	l.concurrency.Set(0)
	l.offeredRate.Set(0)
	c.runs.WithLabelValues(probe, string(r)).Inc()
}

// Waited counts the time a run of probe waited for its host or the caps.
func (c *Collector) Waited(probe string, seconds float64) {
	c.waited.WithLabelValues(probe).Add(seconds)
}

// Forget deletes the live series of a probe that a reload removed. A recorder
// handed out before keeps working but no longer shows up in scrapes.
func (c *Collector) Forget(probe string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.live, probe)
	for key := range c.steps {
		if key[0] == probe {
			delete(c.steps, key)
		}
	}
	l := prometheus.Labels{"probe": probe}
	c.requests.DeletePartialMatch(l)
	c.responses.DeletePartialMatch(l)
	c.duration.DeletePartialMatch(l)
	c.inFlight.DeletePartialMatch(l)
	c.concurrency.DeletePartialMatch(l)
	c.offeredRate.DeletePartialMatch(l)
	c.dropped.DeletePartialMatch(l)
	c.sendDelay.DeletePartialMatch(l)
	c.runs.DeletePartialMatch(l)
	c.running.DeletePartialMatch(l)
	c.waited.DeletePartialMatch(l)
	c.ws.forget(l)
	c.streams.forget(l)
	c.guards.forget(l)
}

func (c *Collector) get(probe string) *Live {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.live[probe]; ok {
		return l
	}
	l := c.newLive(probe, "", newCodeLabels(knownStatus), newCodeLabels(knownCloseCode))
	// Every result starts at 0 so that rate() and increase() work from
	// the first run.
	for _, r := range result.RunResults {
		c.runs.WithLabelValues(probe, string(r))
	}
	c.live[probe] = l
	return l
}

// newLive makes the recorder of probe's requests, or of one flow step's
// when step is set, with every outcome's series at 0 so that rate() works
// from the first attempt. It is built field by field, never copied: its
// cached children belong to one label set.
func (c *Collector) newLive(probe, step string, status *codeLabels[result.Code], close *codeLabels[closeCode]) *Live {
	l := &Live{
		c:            c,
		probe:        probe,
		step:         step,
		statusLabels: status,
		closeLabels:  close,
		responses:    c.responses,
		sendDelayV:   c.sendDelay,
		inFlight:     c.inFlight.WithLabelValues(probe),
		concurrency:  c.concurrency.WithLabelValues(probe),
		offeredRate:  c.offeredRate.WithLabelValues(probe),
		dropped:      c.dropped.WithLabelValues(probe),
		running:      c.running.WithLabelValues(probe),
		ws:           wsLive{families: c.ws},
		streams:      streamLive{families: c.streams},
	}
	l.durSuccess = c.duration.WithLabelValues(probe, result.Success.String(), step)
	l.durHTTPErr = c.duration.WithLabelValues(probe, result.HTTPError.String(), step)
	for o := result.Outcome(0); o < result.NumOutcomes; o++ {
		l.outcomes[o] = c.requests.WithLabelValues(probe, o.String(), step)
	}
	return l
}

type counterRef struct{ c prometheus.Counter }

// Live records the attempts of one probe. Every child it touches is resolved
// in advance (status codes on their first appearance), so its methods do no
// map lookup, no label hashing and no allocation.
type Live struct {
	c          *Collector
	probe      string
	step       string // the flow step whose requests it counts; "" for a single request
	outcomes   [result.NumOutcomes]prometheus.Counter
	durSuccess prometheus.Observer
	durHTTPErr prometheus.Observer
	codes      [result.CodeSlots]atomic.Pointer[counterRef]
	// statusLabels and closeLabels bound the probe's code label values
	// (codes.go); its flow steps' recorders share its own.
	statusLabels *codeLabels[result.Code]
	closeLabels  *codeLabels[closeCode]
	inFlight     prometheus.Gauge
	concurrency  prometheus.Gauge
	offeredRate  prometheus.Gauge
	dropped      prometheus.Counter
	running      prometheus.Gauge

	// Created on first use: closed-loop probes never send late.
	sendDelay  atomic.Pointer[observerRef]
	sendDelayV *prometheus.HistogramVec
	responses  *prometheus.CounterVec

	ws      wsLive     // WebSocket probes only (websocket.go)
	streams streamLive // gRPC stream probes only (grpcstream.go)
}

type observerRef struct{ o prometheus.Observer }

var _ live.Sink = (*Live)(nil)

// Attempt records one finished attempt; code is 0 when there was no response,
// latency in seconds is recorded only for attempts that got one.
func (l *Live) Attempt(o result.Outcome, code result.Code, latency float64) {
	if o < result.NumOutcomes {
		l.outcomes[o].Inc()
	} else {
		l.outcomes[result.Other].Inc()
	}
	switch o {
	case result.Success:
		l.durSuccess.Observe(latency)
	case result.HTTPError:
		l.durHTTPErr.Observe(latency)
	}
	if code != (result.Code{}) {
		l.code(code).Inc()
	}
}

// code resolves the series of a code on its first appearance; one past
// the table (an HTTP status of four digits) shares slot 0, with the label
// "other", as every unknown code has.
func (l *Live) code(code result.Code) prometheus.Counter {
	slot := &l.codes[code.Slot()]
	if r := slot.Load(); r != nil {
		return r.c
	}
	r := &counterRef{l.responses.WithLabelValues(l.probe, l.statusLabels.label(code), l.step)}
	if !slot.CompareAndSwap(nil, r) {
		r = slot.Load()
	}
	return r.c
}

// InFlight adds delta to the outstanding requests.
func (l *Live) InFlight(delta int) { l.inFlight.Add(float64(delta)) }

// Dropped counts one scheduled request that was not sent.
func (l *Live) Dropped() { l.dropped.Inc() }

// SendDelay records how late, in seconds, a request left against its schedule.
func (l *Live) SendDelay(seconds float64) {
	r := l.sendDelay.Load()
	if r == nil {
		r = &observerRef{l.sendDelayV.WithLabelValues(l.probe)}
		if !l.sendDelay.CompareAndSwap(nil, r) {
			r = l.sendDelay.Load()
		}
	}
	r.o.Observe(seconds)
}

// Concurrency sets the connections the closed-loop load asks for.
func (l *Live) Concurrency(n int) { l.concurrency.Set(float64(n)) }

// OfferedRate sets the requests per second the open-loop load asks for.
func (l *Live) OfferedRate(r float64) { l.offeredRate.Set(r) }
