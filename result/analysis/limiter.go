package analysis

import (
	"fmt"
	"math"

	"github.com/loadprobe/loadprobe/result"
)

// limitedShare is the share of a step's failed attempts a limiter's code
// (429, RESOURCE_EXHAUSTED) must exceed for the step to read as limited.
const limitedShare = 0.5

// limited is the steps whose failures are mostly a limiter's declines,
// in order of level.
func (a *analysis) limited() []result.Step {
	var out []result.Step
	for _, s := range a.r.Steps {
		kinds := failureKinds(s)
		if len(kinds) == 0 || kinds[0].reason != "" || kinds[0].code.Class() != result.ClassLimited {
			continue
		}
		var failed int64
		for _, k := range kinds {
			failed += k.n
		}
		if float64(kinds[0].n) > limitedShare*float64(failed) {
			out = append(out, s)
		}
	}
	return out
}

// limiter is a limiter's pass rate: the median goodput of the limited
// steps, when their goodputs hold flat (each within capTolerance of the
// median, or one request a second) and are above zero. One limited step
// is enough, its code being the limiter's own word; a goodput that moves
// with the level is a server failing, whatever it answers.
func (a *analysis) limiter() *result.Limiter {
	steps := a.limited()
	if len(steps) == 0 {
		return nil
	}
	goodputs := make([]float64, len(steps))
	for i, s := range steps {
		goodputs[i] = s.Goodput
	}
	m := median(goodputs)
	if m <= 0 {
		return nil
	}
	for _, g := range goodputs {
		if math.Abs(g-m) > max(capTolerance*m, 1) {
			return nil
		}
	}
	return &result.Limiter{Throughput: m, Code: topKind(steps...).code.String()}
}

// limiterLine names a limiter's pass rate and, when no level was within
// the budgets, the budget its declines broke: the number a client of the
// limiter gets is its pass rate, which capacity alone would call none.
func (a *analysis) limiterLine() string {
	l := a.limit
	if l == nil {
		return ""
	}
	steps := a.limited()
	line := fmt.Sprintf("a limiter passes about %s/s: %s from %s on", fmtNum(l.Throughput),
		describeFailures(steps...), a.levelText(steps[0]))
	if a.capacity >= 0 {
		return line
	}
	budget := fmt.Sprintf("rules.error_ratio_budget (%s)", fmtNum(a.errBudget))
	if a.overLatency(steps[0]) && !a.overErrors(steps[0]) {
		budget = fmt.Sprintf("rules.latency_budget (%s)", fmtSeconds(a.budget))
	}
	return line + "; capacity is none because its declines put every level outside " + budget +
		": raise it to count the pass rate as capacity"
}
