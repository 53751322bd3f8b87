package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
)

// An aligned run's steps start at wall-clock times every replica of a
// fleet computes alike (fleet.StepStarts).

// alignment holds an aligned run's step starts: starts[i] is stage i's,
// and the last is the end of the last stage's settle allowance. Nil when
// the run is not aligned: each step starts when the last one has settled.
type alignment []time.Time

func newAlignment(at time.Time, l plan.Load) alignment {
	if at.IsZero() {
		return nil
	}
	return fleet.StepStarts(at, l)
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
