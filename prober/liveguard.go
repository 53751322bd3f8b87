package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// The live guards judge each window of a step (guard.window, from the
// step's start) by the attempts whose outcome came in it, the warmup's
// included: its error ratio, and its latency quantile of successes. A
// window over a limit is a breach; guard.for breaches in a row of one
// step stop the run at once (docs/guards.md, "Live guards"). A window
// without an attempt (or, for latency, without a success) has nothing to
// judge: it neither breaches nor ends a row of breaches. The partial
// window a step ends on is not judged.

// windowTally counts the attempts of the current window in one recorder,
// under its mutex.
type windowTally struct {
	attempts, failed int64
	success          latencies // only with a latency guard
}

func (w *windowTally) record(o result.Outcome, latency time.Duration, withLatency bool) {
	w.attempts++
	if o.Failed() {
		w.failed++
	} else if withLatency {
		w.success.record(int64(latency))
	}
}

func (w *windowTally) reset() {
	w.attempts, w.failed = 0, 0
	w.success.reset()
}

// liveJudge holds the live guards of a run.
type liveJudge struct {
	guard plan.Guard
	live  live.Guards
	// over counts the breaches in a row of error_ratio and latency.
	over [2]int
	sum  windowTally
}

func newLiveJudge(g plan.Guard, live live.Guards) *liveJudge {
	if !g.Live() {
		return nil
	}
	return &liveJudge{guard: g, live: live}
}

// judgeWindows judges each window of the stage under way, from start
// until done is closed, and stops the run on a guard's breach.
func (e *engine) judgeWindows(start time.Time, done <-chan struct{}) {
	j := e.judge
	j.over = [2]int{}
	e.drainWindow(&windowTally{}) // attempts from before the step (a settle) are not its
	window := time.Duration(j.guard.Window)
	tick := time.NewTimer(time.Until(start.Add(window)))
	defer tick.Stop()
	for n := 2; ; n++ {
		select {
		case <-done:
			return
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		j.sum.reset()
		e.drainWindow(&j.sum)
		if a, fired := j.judge(); fired {
			e.stopRun(a)
			return
		}
		tick.Reset(time.Until(start.Add(time.Duration(n) * window)))
	}
}

// drainWindow adds every recorder's window tally to sum and clears them.
func (e *engine) drainWindow(sum *windowTally) {
	e.recsMu.Lock()
	recs := e.recs
	e.recsMu.Unlock()
	for _, r := range recs {
		r.mu.Lock()
		sum.attempts += r.win.attempts
		sum.failed += r.win.failed
		sum.success.merge(&r.win.success)
		r.win.reset()
		r.mu.Unlock()
	}
}

// judge judges the window in j.sum; it returns the abort of a guard that
// has breached for guard.for windows.
func (j *liveJudge) judge() (result.Abort, bool) {
	var fired *result.Abort
	check := func(i int, name string, value, limit float64) {
		breached := value > limit
		j.live.Guard(name, value, breached)
		if !breached {
			j.over[i] = 0
			return
		}
		if j.over[i]++; j.over[i] >= j.guard.For && fired == nil {
			fired = &result.Abort{By: result.ByLive, Guard: name, Value: value}
		}
	}
	s := &j.sum
	if j.guard.ErrorRatio > 0 && s.attempts > 0 {
		check(0, plan.GuardErrorRatio, float64(s.failed)/float64(s.attempts), j.guard.ErrorRatio)
	}
	if l := j.guard.Latency; l != nil && s.success.n > 0 {
		q := float64(min(s.success.hist.ValueAtQuantile(l.Quantile*100), s.success.max)) / 1e9
		check(1, plan.GuardLatency, q, time.Duration(l.Max).Seconds())
	}
	if fired == nil {
		return result.Abort{}, false
	}
	return *fired, true
}
