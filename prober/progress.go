package prober

import (
	"slices"
	"time"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// handOver gives OnStep the run so far, r, as a run under way. It gets
// steps of its own: readers (the collector) read it while the run goes on
// writing its steps (the saturation read after the run, the cut step).
func (e *engine) handOver(r result.Result) {
	r.Steps = slices.Clone(r.Steps)
	r.Ended = result.ResultRunning
	r.DurationSeconds = time.Since(e.started).Seconds()
	analysis.Analyze(&r, e.probe.Rules)
	e.opts.OnStep(r)
}

// report calls the progress callback about twice a second until done.
func (e *engine) report(i int, st stage, stepStart time.Time, done <-chan struct{}) {
	if e.opts.Progress == nil {
		return
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		p := Progress{
			Probe: e.probe.Name, Step: i + 1, Steps: e.plan.most(), Level: st.level, Name: st.name, Search: st.why,
			Elapsed:   time.Since(e.started),
			Remaining: max(0, st.duration-time.Since(stepStart)) + e.plan.after(i),
			Requests:  e.attempts.Load(),
		}
		e.opts.Progress(p)
		select {
		case <-done:
			return
		case <-e.ctx.Done():
			return // the run may return before its step's workers do
		case <-tick.C:
		}
	}
}
