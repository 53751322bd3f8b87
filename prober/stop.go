package prober

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/telemetry"
)

// A run stops before its end in one of two ways. Its context ends with a
// *result.Stop as its cause when a live guard, a Prometheus guard or the
// pause switch stops it: the run is aborted, and the step under way is kept,
// marked cut. Any other end (a reload, SIGTERM) cancels it: a canceled run
// is no result, and its step under way is dropped.

// stopRun stops the load at once for a guard, and says so to the fleet.
func (e *engine) stopRun(a result.Abort) {
	e.cancel(&result.Stop{Abort: a})
	run := e.opts.Align
	if run.IsZero() {
		run = e.started
	}
	e.guardLive().Stopped(run)
}

// markStop returns when the load stopped: the first time it is asked
// after the run's context ended, which the engine does at once.
func (e *engine) markStop() time.Time {
	e.stopOnce.Do(func() { e.stopped = time.Now() })
	return e.stopped
}

// endStopped ends r, whose run's context has ended: aborted, with cut (the
// step under way, nil between steps) kept as a cut step, when a guard or
// the pause switch stopped it; canceled otherwise.
func (e *engine) endStopped(r *result.Result, cut *result.Step) {
	var s *result.Stop
	if !errors.As(context.Cause(e.ctx), &s) {
		r.Ended = result.ResultCanceled
		return
	}
	a := s.Abort
	a.Level = math.Float64frombits(e.level.Load())
	a.AtSeconds = e.markStop().Sub(e.started).Seconds()
	r.Ended, r.Abort = result.ResultAborted, &a
	r.Error = fmt.Sprintf("%s stopped the load at %s, %.1fs into the run: no higher level ran",
		a.Text(), r.Words().Level(a.Level), a.AtSeconds)
	if cut != nil {
		cut.Cut = true
		r.Steps = append(r.Steps, *cut)
	}
}

// stoppedBeforeLoad is the run of p that a guard or the pause switch
// stopped while its client was being built (a gRPC method asked of the
// server by reflection): aborted at its first level, no load sent.
func stoppedBeforeLoad(p *plan.Probe, a result.Abort, started time.Time) result.Result {
	r := newResult(p, started)
	a.Level = firstLevel(p.Load)
	a.AtSeconds = time.Since(started).Seconds()
	r.Ended, r.Abort, r.DurationSeconds = result.ResultAborted, &a, a.AtSeconds
	r.Error = fmt.Sprintf("%s stopped the run %.1fs into it, before its first level: no load was sent", a.Text(), a.AtSeconds)
	return r
}

// firstLevel is the level l starts with.
func firstLevel(l plan.Load) float64 {
	if l.Search != nil {
		return l.Search.Range().From
	}
	if steps := l.Steps(); len(steps) > 0 {
		return steps[0].Level
	}
	return 0
}

// guardLive is where the guards' evaluations go: the run's Live when it
// takes them.
func (e *engine) guardLive() live.Guards {
	if g, ok := e.live.(live.Guards); ok {
		return g
	}
	return live.NopGuards{}
}

// watchPrometheus starts the probe's Prometheus guards and, on a replica
// of a fleet, the guard that stops it with its peers; their first
// evaluations are done when it returns, before any load. stop ends them.
func (e *engine) watchPrometheus() (stop func(), err error) {
	guards := []*plan.PrometheusGuard{e.probe.Guard.Prometheus}
	if f := e.opts.Fleet; f != nil && !e.opts.Align.IsZero() {
		guards = append(guards, f.Guard(e.probe.Name, e.probe.Guard, e.opts.Align))
	}
	var watchers []*telemetry.Watcher
	stop = func() {
		for _, w := range watchers {
			w.Stop()
		}
	}
	for _, g := range guards {
		if g == nil {
			continue
		}
		w, err := telemetry.NewWatcher(g, e.guardLive())
		if err != nil {
			stop()
			return nil, err
		}
		w.Start(e.ctx, e.stopRun)
		watchers = append(watchers, w)
	}
	return stop, nil
}
