package prober

import (
	"context"
	"time"

	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// Recording is the engine's per-attempt recording, exposed to the benchmarks
// of the external test package (record_bench_test.go), which can import the
// collector without an import cycle.
type Recording struct {
	e           *engine
	rec         *stepRecorder
	measureFrom time.Time
}

// NewRecording returns the recording of a closed-loop worker whose measured
// window opened at measureFrom, feeding live.
func NewRecording(live live.Sink, measureFrom time.Time, window time.Duration) *Recording {
	rec := newStepRecorder(0, false)
	rec.within(window)
	return &Recording{e: &engine{live: live, ctx: context.Background()}, rec: rec, measureFrom: measureFrom}
}

// Observe is engine.observe.
func (r *Recording) Observe(o result.Outcome, code result.Code, from, finished time.Time) {
	r.e.observe(r.rec, o, code, from, finished, r.measureFrom, 0, 0)
}

// Live is the live recorder the engine feeds.
func (r *Recording) Live() live.Sink { return r.e.live }
