package prober

import (
	"context"
	"errors"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// A comparison runs every level on the probe's request, its baseline, and
// on its candidate, in turn: the baseline first at an even stage, the
// candidate first at an odd one, each settled before it, so that neither
// always follows the other's load (docs/compare.md, "Side by side"). A
// search decides from the baseline's figures; the candidate runs its
// levels. The candidate's attempts count in no live metric: its figures
// are its steps'.

// newCandidate builds the workload of p's candidate. A fleet cannot
// compare: its replicas' sums hold one side.
func newCandidate(ctx context.Context, p *plan.Probe, opts Options) (workload, error) {
	if opts.Shard.Replicas() > 1 {
		return nil, errors.New("a fleet cannot compare a candidate: run the comparison on one replica")
	}
	return newWorkload(ctx, candidateOf(p), nil)
}

// candidateOf is p with the candidate's request: the plan its engine runs.
func candidateOf(p *plan.Probe) *plan.Probe {
	c := *p
	c.Request, c.Candidate, c.Compare = p.Candidate, nil, nil
	return &c
}

// candidateOptions are the candidate engine's: no live metrics, progress
// or partial results of its own.
func candidateOptions(opts Options) Options {
	opts.Live, opts.Progress, opts.OnStep, opts.candidate = live.Nop{}, nil, nil, nil
	return opts
}

// sides are e and its candidate's engine, when it compares.
func (e *engine) sides() []*engine {
	if e.cand == nil {
		return []*engine{e}
	}
	return []*engine{e, e.cand}
}

// measure runs stage i on the baseline and, when e compares, on the
// candidate too, in turn. ran is false when the run stopped before the
// baseline's step began.
func (e *engine) measure(i int, st stage) (base result.Step, ran bool) {
	c := e.cand
	if c == nil {
		return e.runStage(i, st), true
	}
	order := []*engine{e, c}
	if i%2 == 1 {
		order = []*engine{c, e}
	}
	for _, side := range order {
		if e.canceled() {
			break
		}
		if side == e {
			base, ran = e.runStage(i, st), true
			continue
		}
		var settled time.Duration
		if len(e.cands) > 0 && c.within > 0 {
			settled = c.settle(c.within, i)
		}
		s := c.runStage(i, st)
		s.SettleSeconds = settled.Seconds()
		if c.within == 0 && s.Attempts > 0 {
			c.within = time.Duration(s.Latency.P99*float64(time.Second)) + settleMargin
		}
		if !e.canceled() {
			e.cands = append(e.cands, s)
		}
	}
	return base, ran
}

// worstErrorRatio is the higher error ratio of the baseline's step and,
// when e compares, of the candidate's at the same stage: abort.error_ratio
// protects both targets.
func (e *engine) worstErrorRatio(base result.Step) float64 {
	worst := base.ErrorRatio
	if n := len(e.cands); n > 0 {
		worst = max(worst, e.cands[n-1].ErrorRatio)
	}
	return worst
}

// judgeCandidate sets r's comparison: the candidate's run, its steps
// analyzed by the probe's rules, judged against r.
func (e *engine) judgeCandidate(r *result.Result) {
	if e.cand == nil {
		return
	}
	c := newResult(e.cand.probe, e.started)
	c.Steps = append(c.Steps, e.cands...)
	c.Ended, c.DurationSeconds = r.Ended, r.DurationSeconds
	analysis.Analyze(&c, e.probe.Rules)
	analysis.Compared(r, c, e.cand.probe.Request.URL.Host, *e.probe.Compare)
}
