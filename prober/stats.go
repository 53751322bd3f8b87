package prober

import (
	"maps"
	"math"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadprobe/loadprobe/result"
)

// The latency histogram's geometry. Values are nanoseconds.
//
// Precision: docs/metrics.md promises step quantiles "exact to 1%". Two significant
// digits in HDR terms means 256 sub-buckets per octave, so every recorded value
// is reported at most 1/128 (0.78%) above its true value, at every magnitude
// from 1ns up. Three digits (0.1%) would cost 7× the memory: 221 KB against
// 31 KB per recorder, and there is one recorder per worker, so at the 4096
// connections max_concurrency allows that is 900 MB against 126 MB. (The
// http_error latencies get a histogram of their own only once a worker
// records one: a probe whose target never fails pays for one histogram.) A coarser
// lowest value does not help: with 3 digits and a 1µs floor the resolution
// is 512ns below 1ms, which is more than 1% for anything under 51µs, and
// loopback latencies live there.
//
// Range: up to 60s. Closed-loop latencies are bounded by the request timeout,
// but open-loop latencies are measured from the intended send time and grow
// without bound during a stall; anything above 60s is recorded as 60s in the
// histogram (the exact value still counts in the mean and the max).
const (
	latencyLowest   = 1
	latencyHighest  = int64(60 * time.Second)
	latencySigFigs  = 2
	maxStepSeconds  = 1 << 20
	initialSecondsN = 64
	// recorderShards bounds the recorders of a run: up to it, every worker
	// (or open-loop sender) has its own; beyond it, workers share them. A
	// recorder is about 50 KB (its histogram, its status-code tables): one
	// per connection took 434 MB at 10 000 connections, and the lock that a
	// shared one needs costs nothing measurable beside a request.
	recorderShards = 64
)

// secondCounts counts the outcomes of one whole second of a step and, in a
// recorder that times its seconds, the latencies of its successes.
type secondCounts struct {
	success, failure int64
	latency          *hdrhistogram.Histogram // ns; nil until the first
}

// secondLatencySigFigs is a second's latency histogram's precision: one
// significant digit, 16 buckets an octave (3.1-6.25% apart), 3 KB a second. A
// second's p99 is one of a comparison's sections (docs/compare.md, "The
// verdict"), whose spread, not its digits, sets the interval.
const secondLatencySigFigs = 1

func newSecondHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyLowest, latencyHighest, secondLatencySigFigs)
}

// latencies is the latency distribution of one outcome's responses.
type latencies struct {
	hist *hdrhistogram.Histogram // ns; nil until the first value
	n    int64
	sum  int64 // ns, exact
	max  int64 // ns, exact
}

// record one latency in nanoseconds. It allocates only the histogram, on
// the first value the recorder ever holds.
func (l *latencies) record(v int64) {
	if l.hist == nil {
		l.hist = newLatencyHistogram()
	}
	v = max(v, 0)
	l.n++
	l.sum += v
	l.max = max(l.max, v)
	// v is clamped into the histogram's range, so this cannot fail (and
	// the error path, which would allocate, is never taken).
	_ = l.hist.RecordValue(min(v, latencyHighest))
}

func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyLowest, latencyHighest, latencySigFigs)
}

func (l *latencies) reset() {
	if l.hist != nil {
		l.hist.Reset()
	}
	l.n, l.sum, l.max = 0, 0, 0
}

func (l *latencies) merge(o *latencies) {
	if o.n == 0 {
		return
	}
	if l.hist == nil {
		l.hist = newLatencyHistogram()
	}
	l.hist.Merge(o.hist)
	l.n += o.n
	l.sum += o.sum
	l.max = max(l.max, o.max)
}

// nativeSchema is the schema of a step's native histogram: buckets
// 2^(1/128) apart, 0.54% wide. A quantile Prometheus reads from it lies in
// the bucket of the histogram's own (latencySigFigs: its buckets at most
// 0.78% wide), so within 1% of it, over one replica's step or a fleet's
// sum (docs/metrics.md, "Per step"); schema 6 (1.09% wide) would not hold
// that bound.
const nativeSchema = 7

// native is the distribution as a native histogram's buckets, each of the
// histogram's buckets counted in the native one that holds its highest
// value (the value ValueAtQuantile reads); nil when empty.
func (l *latencies) native() *result.NativeBuckets {
	if l.n == 0 {
		return nil
	}
	b := &result.NativeBuckets{Schema: nativeSchema, Buckets: map[int]int64{}}
	for _, bar := range l.hist.Distribution() {
		switch {
		case bar.Count == 0:
		case bar.To <= 0:
			b.Zero += uint64(bar.Count)
		default:
			v := float64(bar.To) / 1e9
			i := int(math.Ceil(math.Log2(v) * (1 << nativeSchema)))
			if math.Exp2(float64(i-1)/(1<<nativeSchema)) >= v {
				i-- // a value on a bound, which log2 rounded above it
			}
			b.Buckets[i] += bar.Count
		}
	}
	return b
}

// summary is the distribution as the step's figures; zero when empty.
func (l *latencies) summary() result.Latency {
	if l.n == 0 {
		return result.Latency{}
	}
	ns := func(v int64) float64 { return float64(v) / 1e9 }
	// A histogram quantile is the top of its bucket and may exceed the
	// exact maximum; no quantile reads above the max.
	q := func(p float64) float64 { return ns(min(l.hist.ValueAtQuantile(p), l.max)) }
	return result.Latency{
		Mean: ns(l.sum) / float64(l.n),
		P50:  q(50),
		P90:  q(90),
		P95:  q(95),
		P99:  q(99),
		P999: q(99.9),
		Max:  ns(l.max),
	}
}

// stepRecorder accumulates the attempts of one step: one worker's, or those
// of the workers that share it (see recorderShards), who take mu around
// record and arrived. The engine merges them when the step ends.
type stepRecorder struct {
	mu       sync.Mutex
	success  latencies // latencies of the successful responses
	httpErr  latencies // latencies of the http_error responses
	outcomes [result.NumOutcomes]int64
	codes    [result.CodeSlots]int64 // responses by code slot
	errCodes [result.CodeSlots]int64 // http_error responses by code slot
	seconds  []secondCounts          // by whole second since the start of the measured window
	// timesSeconds: each second keeps its successes' latencies too.
	timesSeconds bool
	// until is the end of the measured window when set (see within);
	// answered and succeeded count the responses that came before it.
	until     time.Duration
	answered  int64
	succeeded int64
	// held sums, over the attempts, the part of each one's time from its
	// send to its outcome that fell inside the window (closed loop).
	held time.Duration
	// win counts the live guards' current window (liveguard.go), drained
	// by them; untouched without a live guard.
	win windowTally

	// A flow's iterations: the think time of those started in the window
	// (a virtual user who thinks is busy), and the attempts of each of its
	// steps; nil for a single request. misses counts, by code, the
	// responses a step's captures found nothing in.
	think  time.Duration
	flow   []*stepRecorder
	misses result.Codes
}

// newStepRecorder returns a recorder of a step's attempts, and of those
// of each of a flow's steps steps; timesSeconds keeps each second's
// latencies.
func newStepRecorder(steps int, timesSeconds bool) *stepRecorder {
	r := &stepRecorder{seconds: make([]secondCounts, 0, initialSecondsN), timesSeconds: timesSeconds}
	r.success.hist = newLatencyHistogram()
	for range steps {
		r.flow = append(r.flow, newStepRecorder(0, false))
	}
	return r
}

// missed counts a response with code in which a flow step's captures
// found nothing.
func (r *stepRecorder) missed(code result.Code) {
	if r.misses == nil {
		r.misses = result.Codes{}
	}
	r.misses[code]++
}

// record one attempt. at is the time since the start of the step's measured
// window (after warmup); latency in nanoseconds, ignored for attempts without
// a response; code zero when no response. It allocates nothing except when at
// enters a second the recorder has never held (amortized, about once per
// second of a step, never after the first step of a reused recorder) and
// on the first http_error the recorder ever holds.
func (r *stepRecorder) record(o result.Outcome, code result.Code, latency time.Duration, at time.Duration) {
	if o >= result.NumOutcomes {
		o = result.Other
	}
	r.outcomes[o]++
	if o.Responded() {
		if r.until == 0 || at+latency <= r.until {
			r.arrived(o)
		}
		slot := code.Slot()
		r.codes[slot]++
		if o == result.Success {
			r.success.record(int64(latency))
		} else {
			r.errCodes[slot]++
			r.httpErr.record(int64(latency))
		}
	}
	sec := r.second(min(int(at/time.Second), maxStepSeconds-1))
	if o != result.Success {
		if o.Failed() {
			sec.failure++
		}
		return
	}
	sec.success++
	if r.timesSeconds {
		if sec.latency == nil {
			sec.latency = newSecondHistogram()
		}
		_ = sec.latency.RecordValue(min(max(int64(latency), 0), latencyHighest)) // in range: no error
	}
}

// second is the counts of whole second s, grown into: a second the
// recorder held in an earlier step keeps its latency histogram's memory.
func (r *stepRecorder) second(s int) *secondCounts {
	for len(r.seconds) <= s {
		if n := len(r.seconds); n < cap(r.seconds) {
			r.seconds = r.seconds[:n+1]
			sec := &r.seconds[n]
			sec.success, sec.failure = 0, 0
			if sec.latency != nil {
				sec.latency.Reset()
			}
			continue
		}
		r.seconds = append(r.seconds, secondCounts{})
	}
	return &r.seconds[s]
}

// reset empties r for the next step, keeping its memory.
func (r *stepRecorder) reset() {
	r.success.reset()
	r.httpErr.reset()
	r.outcomes = [result.NumOutcomes]int64{}
	clear(r.codes[:])
	clear(r.errCodes[:])
	r.seconds = r.seconds[:0]
	r.until, r.answered, r.succeeded, r.held, r.think = 0, 0, 0, 0, 0
	clear(r.misses)
	for _, f := range r.flow {
		f.reset()
	}
}

// within sets the end of the measured window, after reset. Throughput and
// goodput then count only the responses that came inside the window, as a
// server-side counter would: counting every attempt started in it would add
// the requests still under way at its end, which a step that starts from
// idle (no warmup) does not make up for at its start — 8% too many at 32
// connections over one second — and which an open loop that the target
// cannot keep up with piles up without bound.
func (r *stepRecorder) within(until time.Duration) {
	r.until = until
	for _, f := range r.flow {
		f.within(until)
	}
}

// arrived counts a response that came inside the window in throughput and
// goodput. The engine also calls it, and nothing else, for an attempt of the
// warmup answered inside the window: a server-side counter sees that
// response, and leaving it out would make the window lose one level's worth
// at its start on top of the one still under way at its end.
func (r *stepRecorder) arrived(o result.Outcome) {
	r.answered++
	if o == result.Success {
		r.succeeded++
	}
}

// merge adds everything o recorded to r; o is unchanged.
func (r *stepRecorder) merge(o *stepRecorder) {
	r.success.merge(&o.success)
	r.httpErr.merge(&o.httpErr)
	r.until = max(r.until, o.until)
	r.answered += o.answered
	r.succeeded += o.succeeded
	r.held += o.held
	r.think += o.think
	if len(o.misses) > 0 && r.misses == nil {
		r.misses = result.Codes{}
	}
	for code, n := range o.misses {
		r.misses[code] += n
	}
	for i, f := range r.flow {
		f.merge(o.flow[i])
	}
	for i, n := range o.outcomes {
		r.outcomes[i] += n
	}
	for i, n := range o.codes {
		r.codes[i] += n
	}
	for i, n := range o.errCodes {
		r.errCodes[i] += n
	}
	for i, c := range o.seconds {
		sec := r.second(i)
		sec.success += c.success
		sec.failure += c.failure
		if c.latency != nil {
			if sec.latency == nil {
				sec.latency = newSecondHistogram()
			}
			sec.latency.Merge(c.latency)
		}
	}
}

// summarize turns a merged recorder into the Step figures of docs/results.md.
// measured is the measured window (step_duration - warmup); level is the
// configured level; closedLoop says how load_held_ratio is computed: the
// attempts' held time over level × window (closed loop), the attempts sent
// per second over level (open loop).
//
// Every recorded attempt counts in the totals and the rates. PerSecond holds
// one entry for each whole second of the measured window: a partial last
// second would show a fraction of a second's counts and read as a drop, so it
// is left out (its attempts still count in the totals).
//
// Latency is over the successful responses, ErrorLatency over the http_error
// ones (nil when there were none). Errors always holds every no-response
// reason, zero or not: the set is fixed and small, and a reader (or jq) gets
// 0 rather than a missing key, as in the example of docs/results.md. Responses and
// HTTPErrors hold only the codes that occurred. No map nor PerSecond is ever
// nil, so the JSON never shows null for them.
func (r *stepRecorder) summarize(level float64, name string, measured time.Duration, closedLoop bool) result.Step {
	secs := measured.Seconds()
	var attempts int64
	for _, n := range r.outcomes {
		attempts += n
	}
	st := result.Step{
		Level:           level,
		Name:            name,
		DurationSeconds: secs,
		Attempts:        attempts,
		Latency:         r.success.summary(),
		LatencyBuckets:  r.success.native(),
		Responses:       counted(r.codes[:]),
		HTTPErrors:      counted(r.errCodes[:]),
		Errors:          make(map[string]int64, len(result.NoResponseReasons)),
	}
	if r.httpErr.n > 0 {
		l := r.httpErr.summary()
		st.ErrorLatency = &l
	}
	if secs > 0 {
		st.Throughput = float64(r.answered) / secs
		st.Goodput = float64(r.succeeded) / secs
	}
	if attempts > 0 {
		st.ErrorRatio = float64(attempts-r.outcomes[result.Success]-r.outcomes[result.Script]) / float64(attempts)
	}
	for _, o := range result.NoResponseReasons {
		st.Errors[o.String()] = r.outcomes[o]
	}
	if r.outcomes[result.Generator] > 0 {
		st.FileLimit = fileLimit()
	}
	// Little's law, over every response, failed or not: an attempt without
	// a response has no latency to contribute. It is what the target
	// served; load_held_ratio below is what the generator held.
	if n := r.success.n + r.httpErr.n; n > 0 {
		st.InFlight = st.Throughput * float64(r.success.sum+r.httpErr.sum) / 1e9 / float64(n)
	}
	if closedLoop && attempts > 0 {
		// A flow's virtual users are busy thinking too (Little's law over
		// the whole iteration); load_held_ratio already counts each
		// iteration whole, think time included.
		st.InFlight += st.Throughput * (r.think / time.Duration(attempts)).Seconds()
	}
	switch {
	case level <= 0:
		// Nothing was asked for, so nothing was missed.
		st.LoadHeldRatio = 1
	case secs <= 0:
	case closedLoop:
		st.LoadHeldRatio = r.held.Seconds() / secs / level
	default:
		st.LoadHeldRatio = float64(attempts) / secs / level
	}

	n := int(measured / time.Second)
	st.PerSecond = make([]result.Second, max(n, 0))
	for i := range st.PerSecond {
		st.PerSecond[i].Second = i
		if i < len(r.seconds) {
			sec := r.seconds[i]
			st.PerSecond[i].Success, st.PerSecond[i].Failure = sec.success, sec.failure
			if sec.latency != nil && sec.latency.TotalCount() > 0 {
				st.PerSecond[i].P99 = float64(sec.latency.ValueAtQuantile(99)) / 1e9
			}
		}
	}
	return st
}

// flowFigures are the figures of each of a flow's steps, named names, over
// the measured window; nil for a single request.
func (r *stepRecorder) flowFigures(names []string, measured time.Duration) []result.FlowFigures {
	if r.flow == nil {
		return nil
	}
	out := make([]result.FlowFigures, len(r.flow))
	for i, f := range r.flow {
		s := f.summarize(0, names[i], measured, true)
		out[i] = result.FlowFigures{Name: names[i], Attempts: s.Attempts, ErrorRatio: s.ErrorRatio,
			Latency: s.Latency, Responses: s.Responses, HTTPErrors: s.HTTPErrors, Errors: s.Errors,
			CaptureMisses: maps.Clone(f.misses)}
		if out[i].CaptureMisses == nil {
			out[i].CaptureMisses = result.Codes{}
		}
	}
	return out
}

// counted is the non-zero counts of a table by code slot.
func counted(bySlot []int64) result.Codes {
	m := result.Codes{}
	for slot, n := range bySlot {
		if n > 0 {
			m[result.CodeAt(slot)] = n
		}
	}
	return m
}
