package fleet

import (
	"time"

	"github.com/loadprobe/loadprobe/plan"
)

// A fleet's replicas step together because each computes the same step
// starts from the same wall-clock boundary, with no word between them
// (docs/fleet.md, "Aligned runs and steps"). Step i starts at the run's
// boundary plus the lengths of the steps before it, each followed by a
// fixed settle allowance: a replica that settles early waits for the next
// start, and one still settling at it stops settling there, because the
// rest of the fleet starts the step at that moment whatever this replica
// waits for.

// SettleAllowance is the time an aligned run leaves between two steps for
// settling (docs/design.md, "Settling between steps"): half a
// step_duration, at most settle_timeout. Half a step leaves a backlog of
// that step's timeouts room to clear without making a ramp half settling.
func SettleAllowance(l plan.Load) time.Duration {
	return min(time.Duration(l.StepDuration)/2, time.Duration(l.SettleTimeout))
}

// StepStarts is when each step of an aligned run of l starts, from its
// boundary at, followed by the end of the last step's settle allowance:
// where the next aligned run (its control, or the next run of a
// continuous probe) starts. A search's steps are max_steps steps of
// step_duration, whichever levels it chooses.
func StepStarts(at time.Time, l plan.Load) []time.Time {
	lengths := make([]time.Duration, 0, len(l.Steps()))
	for _, st := range l.Steps() {
		lengths = append(lengths, st.Duration)
	}
	if s := l.Search; s != nil {
		for range s.MaxSteps {
			lengths = append(lengths, time.Duration(l.StepDuration))
		}
	}
	starts := make([]time.Time, 0, len(lengths)+1)
	for _, d := range lengths {
		starts = append(starts, at)
		at = at.Add(d + SettleAllowance(l))
	}
	return append(starts, at)
}

// AlignedLength is how long an aligned run of l takes from its boundary
// to the start of the next aligned run.
func AlignedLength(l plan.Load) time.Duration {
	var at time.Time
	starts := StepStarts(at, l)
	return starts[len(starts)-1].Sub(at)
}

// ControlStart is when the control of a run of l aligned at at starts:
// after the run's last step and its settle allowance. Zero for a run that
// is not aligned.
func ControlStart(at time.Time, l plan.Load) time.Time {
	if at.IsZero() {
		return at
	}
	return at.Add(AlignedLength(l))
}

// PairLength is how long an aligned run of l takes with its control's
// (of load control; nil: none) after it, to the start of the next run.
func PairLength(l plan.Load, control *plan.Load) time.Duration {
	d := AlignedLength(l)
	if control != nil {
		d += AlignedLength(*control)
	}
	return d
}

// Boundary is the first multiple of grid since the Unix epoch at or after
// t: where replicas that agree on grid start a run together.
func Boundary(t time.Time, grid time.Duration) time.Time {
	ns := t.UnixNano()
	b := ns - ns%int64(grid)
	if b < ns {
		b += int64(grid)
	}
	return time.Unix(0, b)
}
