package result

import (
	"fmt"
	"math"
	"slices"
)

// Shape thresholds (DESIGN point 7).
const (
	// A cap's successes per second stay within this fraction of their median
	// (or within one request, for small counts) ...
	capTolerance = 0.10
	// ... in at least this share of the failing seconds, and failures come in
	// at least this share of them ("nearly every second": one second may
	// straddle a level change or a limiter's window).
	nearlyAll = 0.9
)

// tick is one whole second of one step.
type tick struct {
	step, sec        int
	success, failure int64
}

func (a *analysis) timeline() []tick {
	var tl []tick
	for i, s := range a.r.Steps {
		for j, ps := range s.PerSecond {
			tl = append(tl, tick{i, j, ps.Success, ps.Failure})
		}
	}
	return tl
}

// shapeLine names the shape of the failures over time (DESIGN point 7),
// reading the per-second counts of all steps in the order they ran: a
// depleting resource, a working cap or a cliff, in that order of precedence.
func (a *analysis) shapeLine() string {
	steps := a.r.Steps
	first := slices.IndexFunc(steps, func(s Step) bool { return s.ErrorRatio > 0 })
	if first < 0 {
		return ""
	}
	tl := a.timeline()
	if len(tl) == 0 {
		return ""
	}
	if a.peak < 0 || steps[a.peak].Goodput == 0 {
		return "" // nothing succeeded: the knee and first-failure lines say it all
	}
	if l := a.depletion(tl); l != "" {
		return l
	}
	if l := a.workingCap(tl); l != "" {
		return l
	}
	if l := a.cliff(tl, first); l != "" {
		return l
	}
	var secs, failing int
	for _, t := range tl {
		if t.step >= first {
			secs++
			if t.failure > 0 {
				failing++
			}
		}
	}
	if secs == 0 {
		return ""
	}
	return fmt.Sprintf("failures came in %d of %d seconds from %s on: no depletion, cap or cliff shape",
		failing, secs, a.levelText(steps[first]))
}

// depletion: successes per second go from healthy to zero in the middle of a
// level and stay zero, across any later levels, while failures continue.
// A switch exactly at a level change is left to the cliff: there the level,
// not the number of requests served, is the likelier cause.
func (a *analysis) depletion(tl []tick) string {
	steps := a.r.Steps
	last := -1
	for i, t := range tl {
		if t.success > 0 {
			last = i
		}
	}
	z := last + 1
	if last < 0 || len(tl)-z < 2 || tl[z].sec == 0 {
		return ""
	}
	failing := 0
	for _, t := range tl[z:] {
		if t.failure > 0 {
			failing++
		}
	}
	if failing < 2 || float64(failing) < nearlyAll*float64(len(tl)-z) {
		return ""
	}
	// The successes before the switch: every success of the run, since none
	// came after it. From the step totals, so partial seconds count too.
	var n float64
	clean := true
	for i, s := range steps {
		n += s.Goodput * s.DurationSeconds
		if i < tl[z].step && s.ErrorRatio > 0 {
			clean = false
		}
	}
	// The last second with successes is the switch itself and may hold both.
	for _, t := range tl[:last] {
		if t.step == tl[z].step && t.failure > 0 {
			clean = false
		}
	}
	health := "clean"
	if !clean {
		health = "healthy"
	}
	sw := steps[tl[z].step]
	return fmt.Sprintf("%s for %d requests, then only failures from second %d %s on (%s): a depleting resource, exhausted after a number of requests rather than at a level",
		health, int64(math.Round(n)), tl[z].sec, a.at(sw), topFailure(steps[tl[z].step:]...))
}

// workingCap: in the failing steps, successes per second stay roughly
// constant (within capTolerance of their median) across seconds and steps
// while failures come in (nearly) every second. It takes two failing levels
// at least: at a single level, a constant success rate beside constant
// failures is what any fixed failure probability gives too; a cap shows as
// successes that do not move when the load does.
func (a *analysis) workingCap(tl []tick) string {
	steps := a.r.Steps
	var secs []tick
	failingSteps := map[int]bool{}
	for _, t := range tl {
		if steps[t.step].ErrorRatio > 0 {
			secs = append(secs, t)
			failingSteps[t.step] = true
		}
	}
	if len(failingSteps) < 2 || len(secs) < 3 {
		return ""
	}
	succ := make([]float64, len(secs))
	failing := 0
	for i, t := range secs {
		succ[i] = float64(t.success)
		if t.failure > 0 {
			failing++
		}
	}
	m := median(succ)
	if m <= 0 || float64(failing) < nearlyAll*float64(len(secs)) {
		return ""
	}
	tol := max(capTolerance*m, 1)
	within := 0
	for _, v := range succ {
		if math.Abs(v-m) <= tol {
			within++
		}
	}
	if float64(within) < nearlyAll*float64(len(secs)) {
		return ""
	}
	from := secs[0].step
	var failSteps []Step
	for i := range steps {
		if failingSteps[i] {
			failSteps = append(failSteps, steps[i])
		}
	}
	every := "every second"
	if failing < len(secs) {
		every = fmt.Sprintf("in %d of %d seconds", failing, len(secs))
	}
	return fmt.Sprintf("successes pinned at ~%s/s while failures came %s from %s: a working cap (%s)",
		fmtNum(m), every, a.levelText(steps[from]), topFailure(failSteps...))
}

// cliff: no failures below a level, and failures in every second from it on.
func (a *analysis) cliff(tl []tick, first int) string {
	steps := a.r.Steps
	if first == 0 {
		return ""
	}
	n := 0
	var after int64
	for _, t := range tl {
		if t.step < first {
			continue
		}
		n++
		if t.failure == 0 {
			return ""
		}
		after += t.success
	}
	if n == 0 {
		return ""
	}
	what := "failures in every second"
	if after == 0 {
		what = "only failures, every second"
	}
	return fmt.Sprintf("no failures below %s, then %s from it on: a cliff (%s)",
		a.levelText(steps[first]), what, topFailure(steps[first:]...))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
