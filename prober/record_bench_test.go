package prober_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// BenchmarkRecordAttempt is the per-request cost of recording one attempt
// beside the request itself, as the engine pays it:
//   - stats: the step figures only (engine.observe with no live metrics);
//   - stats+live: engine.observe into the step figures and the live
//     Prometheus metrics of a real collector, what every attempt pays;
//   - closed-loop: all of a closed-loop worker's bookkeeping around one
//     request: the in-flight gauge up and down, the clock read after the
//     response, and engine.observe.
//
// Latencies cycle through 1024 values from 50µs to 50ms, one in 16 attempts
// is a 503, and the attempts spread over a 10 s step, so the histograms and
// the per-second timeline see what a real step gives them.
func BenchmarkRecordAttempt(b *testing.B) {
	start := time.Now()
	lat := make([]time.Duration, 1024)
	for i := range lat {
		lat[i] = 50*time.Microsecond + time.Duration(i)*time.Duration(i)*47*time.Nanosecond
	}
	const window = 10 * time.Second
	sink := func() live.Sink {
		return collector.New(prometheus.NewRegistry()).Live("bench")
	}
	outcome := func(i int) (result.Outcome, result.Code) {
		if i&15 == 0 {
			return result.HTTPError, result.HTTPStatus(503)
		}
		return result.Success, result.HTTPStatus(200)
	}
	observe := func(b *testing.B, r *prober.Recording) {
		// Warm the timeline and the code counters, as after a step's first second.
		r.Observe(result.Success, result.HTTPStatus(200), start.Add(window-time.Millisecond), start.Add(window))
		r.Observe(result.HTTPError, result.HTTPStatus(503), start, start.Add(time.Millisecond))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			from := start.Add(time.Duration(i&8191) * window / 8192)
			o, code := outcome(i)
			r.Observe(o, code, from, from.Add(lat[i&1023]))
		}
	}
	b.Run("stats", func(b *testing.B) {
		observe(b, prober.NewRecording(live.Nop{}, start, window))
	})
	b.Run("stats+live", func(b *testing.B) {
		observe(b, prober.NewRecording(sink(), start, window))
	})
	b.Run("closed-loop", func(b *testing.B) {
		r := prober.NewRecording(sink(), start, window)
		l := r.Live()
		r.Observe(result.Success, result.HTTPStatus(200), start, start.Add(time.Millisecond))
		r.Observe(result.HTTPError, result.HTTPStatus(503), start, start.Add(time.Millisecond))
		b.ReportAllocs()
		now := time.Now()
		for i := 0; b.Loop(); i++ {
			o, code := outcome(i)
			l.InFlight(1)
			finished := time.Now()
			l.InFlight(-1)
			r.Observe(o, code, now, finished)
			now = finished
		}
	})
}
