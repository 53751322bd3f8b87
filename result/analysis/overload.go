package analysis

import (
	"fmt"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// The grades' lower bounds of goodput retained past capacity: a good
// component past its limit serves errors "but does not significantly
// reduce the rate at which it successfully handles requests" (Google's
// SRE book, chapter 22).
const (
	gracefulRetained = 0.9
	degradedRetained = 0.5
)

// pastCapacity is the step of lowest goodput among the levels above
// capacity's; -1 without a capacity, without such a level, or for phases.
func (a *analysis) pastCapacity() int {
	if a.capacity < 0 || a.r.Mode == plan.ModePhases {
		return -1
	}
	steps, level := a.r.Steps, a.r.Steps[a.capacity].Level
	low := -1
	for i, s := range steps {
		if s.Level > level && (low < 0 || s.Goodput < steps[low].Goodput) {
			low = i
		}
	}
	return low
}

// overload grades the levels past capacity's by the goodput they kept.
func (a *analysis) overload() *result.Overload {
	if a.past < 0 || a.r.Steps[a.best].Goodput <= 0 {
		return nil
	}
	retained := a.r.Steps[a.past].Goodput / a.r.Steps[a.best].Goodput
	grade := result.OverloadCollapse
	switch {
	case retained >= gracefulRetained:
		grade = result.OverloadGraceful
	case retained >= degradedRetained:
		grade = result.OverloadDegraded
	}
	return &result.Overload{Grade: grade, GoodputRetained: retained}
}

// overloadLine says how the target served past its capacity.
func (a *analysis) overloadLine() string {
	o := a.over
	if o == nil {
		return ""
	}
	low := a.r.Steps[a.past]
	kept := fmt.Sprintf("goodput past capacity kept %s of it at worst (%s/s %s)", fmtPct(o.GoodputRetained), fmtNum(low.Goodput), a.at(low))
	switch o.Grade {
	case result.OverloadGraceful:
		return "overload graceful: " + kept + ": it turns load away and keeps serving"
	case result.OverloadDegraded:
		return fmt.Sprintf("overload degraded: %s, below %s: more load costs work done", kept, fmtPct(gracefulRetained))
	}
	return fmt.Sprintf("overload collapse: %s, below %s: past its limit it serves little", kept, fmtPct(degradedRetained))
}
