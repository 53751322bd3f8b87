package prober

import (
	"context"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// Runner runs one probe once and returns its result, or an error when the
// probe cannot run at all. Run is the Runner that sends load; the
// scheduler takes a Runner, so that its tests can give it one that sends
// none.
type Runner func(ctx context.Context, p *plan.Probe, opts Options) (result.Result, error)

// Control is the control probe that checks a probe's run: the same
// generator against a route that cannot saturate (docs/design.md, "The control probe").
type Control struct {
	Probe   *plan.Probe
	Options Options
	// Started, when set, is called with the probe's result just before
	// the control starts.
	Started func(probe result.Result)
	// Ended, when set, is called with the control's result once it ends.
	Ended func(control result.Result)
}

// WithControl runs p and then, when c is not nil, its control, and returns
// p's result as the control judges it (analysis.MarkControl). Both `run` and
// the daemon run a probe this way; the one answer for a run that does not
// end well:
//   - p could not run (the runner's error) or was canceled: the control
//     does not run. A run that could not run is returned as a "failed"
//     result, whose error says why; a canceled one as it is.
//   - p was stopped by a guard or the pause switch: the control does not
//     run either (the target suffers, or all load is to stop), and p's
//     result is returned as it is.
//   - p completed, or was aborted by abort.error_ratio: its steps are
//     whole, and the control runs right after it.
//   - the control was stopped by a guard or the pause switch: p's result
//     is aborted with the control's abort, unjudged.
//   - the control was canceled: p's result is canceled too. The run was
//     cut short before it could be checked; it is no result to keep.
//   - the control completed, aborted or failed: MarkControl judges p by
//     it (a control that found no knee leaves p as it is).
//
// The control of a search runs the levels the search measured, in order
// of level: the generator is checked where the probe's load went.
func (run Runner) WithControl(ctx context.Context, p *plan.Probe, opts Options, c *Control) result.Result {
	r := run.orFailed(ctx, p, opts)
	stopped := r.Abort != nil && r.Abort.By != result.ByErrorRatio
	if c == nil || r.Ended == result.ResultFailed || r.Ended == result.ResultCanceled || stopped {
		return r
	}
	if c.Started != nil {
		c.Started(r)
	}
	cp := c.Probe
	if r.Searched() {
		levels := *cp
		levels.Load = sameLevels(cp.Load, r)
		cp = &levels
	}
	cr := run.orFailed(ctx, cp, c.Options)
	if c.Ended != nil {
		c.Ended(cr)
	}
	if cr.Ended == result.ResultCanceled {
		r.Ended = result.ResultCanceled
		return r
	}
	if a := cr.Abort; a != nil && a.By != result.ByErrorRatio {
		r.Ended, r.Abort, r.Error = result.ResultAborted, a, result.Reason("the control: "+cr.Error)
		return r
	}
	analysis.MarkControl(&r, cr)
	return r
}

// sameLevels is l as a fixed ramp over the levels r measured, in order of
// level, each once.
func sameLevels(l plan.Load, r result.Result) plan.Load {
	l.Search, l.Concurrency, l.Rate, l.Phases = nil, nil, nil, nil
	for _, s := range analysis.ByLevel(r.Mode, r.Steps) {
		if r.Mode.ClosedLoop() {
			l.Concurrency = append(l.Concurrency, int(s.Level))
		} else {
			l.Rate = append(l.Rate, s.Level)
		}
	}
	return l
}

// orFailed runs p, and tells a run that could not run as a "failed" result.
func (run Runner) orFailed(ctx context.Context, p *plan.Probe, opts Options) result.Result {
	started := time.Now()
	r, err := run(ctx, p, opts)
	if err != nil {
		r = newResult(p, started)
		r.Ended, r.Error = result.ResultFailed, result.Reason(err.Error())
		r.DurationSeconds = time.Since(started).Seconds()
	}
	return r
}
