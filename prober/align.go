package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/plan"
)

// A fleet's replicas step together because each computes the same step
// starts from the same wall-clock boundary, with no word between them
// (docs/fleet.md, "Aligned runs and steps"). Step i starts at the run's boundary
// plus the lengths of the steps before it, each followed by a fixed settle
// allowance: a replica that settles early waits for the next start, and one
// still settling at it stops settling there, because the rest of the fleet
// starts the step at that moment whatever this replica waits for.

// SettleAllowance is the time an aligned run leaves between two steps for
// settling (docs/design.md, "Settling between steps"): half a step_duration, at most
// settle_timeout. Half a step leaves a backlog of that step's timeouts room
// to clear without making a ramp half settling.
func SettleAllowance(l plan.Load) time.Duration {
	return min(time.Duration(l.StepDuration)/2, time.Duration(l.SettleTimeout))
}

// AlignedLength is how long an aligned run of l takes from its boundary to
// the boundary after its last step's settle allowance: where the next
// aligned run (its control, or the next run of a continuous probe) starts.
func AlignedLength(l plan.Load) time.Duration {
	var d time.Duration
	for _, st := range stagesOf(l, config.Shard{}) {
		d += st.duration + SettleAllowance(l)
	}
	return d
}

// alignment holds an aligned run's step starts: starts[i] is stage i's,
// and the last is the end of the last stage's settle allowance. Nil when
// the run is not aligned: each step starts when the last one has settled.
type alignment []time.Time

func newAlignment(at time.Time, l plan.Load, stages []stage) alignment {
	if at.IsZero() {
		return nil
	}
	starts := make(alignment, 0, len(stages)+1)
	next := at
	for _, st := range stages {
		starts = append(starts, next)
		next = next.Add(st.duration + SettleAllowance(l))
	}
	return append(starts, next)
}

// start is when stage i starts; zero (at once) when not aligned.
func (a alignment) start(i int) time.Time {
	if a == nil {
		return time.Time{}
	}
	return a[i]
}

// settleBy is when a settle that began at begin, before stage next (or
// after the last stage: next is the stage count), gives up: at
// settle_timeout, or at the next aligned start if that comes first.
func (e *engine) settleBy(begin time.Time, next int) time.Time {
	giveUp := begin.Add(time.Duration(e.probe.Load.SettleTimeout))
	if at := e.align.start(next); !at.IsZero() && at.Before(giveUp) {
		return at
	}
	return giveUp
}

// waitForStart holds the replica until stage i's aligned start, or until
// the run ends. A replica that is late (its settle ran to the start, or the
// run began late) starts at once.
func (e *engine) waitForStart(i int) {
	if at := e.align.start(i); !at.IsZero() {
		e.idle(at)
	}
}
