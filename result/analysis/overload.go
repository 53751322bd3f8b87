package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

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

// A recovery is measured in windows of RecoveryWindow at the first level's
// load; RecoveryWindows of them in a row that RecoveredIn says the target
// recovered (docs/measurement.md, "Recovery").
const (
	RecoveryWindow  = time.Second
	RecoveryWindows = 3
	recoveryFactor  = 1.5
	recoveryMargin  = 5 * time.Millisecond
)

// RecoveredIn reports whether window w, at the load of the run's first
// level, shows the target recovered: no failure, and a p99 within
// recoveryFactor of the first level's in the run, plus recoveryMargin.
func RecoveredIn(w, first result.Step) bool {
	return w.Attempts > 0 && w.Failed() == 0 && w.Latency.P99 <= recoveryFactor*first.Latency.P99+recoveryMargin.Seconds()
}

// Recovery is what the engine measured after a run past its capacity, in
// windows at its first level's load (docs/measurement.md, "Recovery").
type Recovery struct {
	// Measured is false when no recovery was measured: the run did not
	// go past its capacity, or it was stopped.
	Measured  bool
	Recovered bool
	// Seconds is from the end of the run's last level to the start of
	// the first of the good windows in a row, when Recovered.
	Seconds float64
	// Within is the bound, settle_timeout.
	Within time.Duration
	// Level is the first level, whose load the windows applied.
	Level result.Step
}

// Recovered adds rec to r's overload, which Analyze filled, and says it in
// the line after the overload's.
func Recovered(r *result.Result, rec Recovery) {
	if !rec.Measured || r.Overload == nil {
		return
	}
	a := &analysis{r: r}
	criteria := fmt.Sprintf("%d windows of %s in a row %s without a failure and with a p99 within %s× (+%s) of its %s in the run",
		RecoveryWindows, RecoveryWindow, a.at(rec.Level), fmtNum(recoveryFactor), recoveryMargin, fmtSeconds(rec.Level.Latency.P99))
	line := fmt.Sprintf("did not recover within %s of the end of its last level: no %s", rec.Within, criteria)
	if rec.Recovered {
		seconds := rec.Seconds
		r.Overload.RecoverySeconds = &seconds
		line = fmt.Sprintf("recovered %ss after the end of its last level: the first of %s", fmtNum(seconds), criteria)
	}
	i := slices.IndexFunc(r.Diagnosis, func(l string) bool { return strings.HasPrefix(l, "overload ") })
	r.Diagnosis = slices.Insert(r.Diagnosis, i+1, line)
}
