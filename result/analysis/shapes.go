package analysis

import (
	"fmt"
	"slices"

	"github.com/loadprobe/loadprobe/result"
)

// nearlyAll is the share of a shape's seconds that must show it ("nearly
// every second": one second may straddle a level change or a limiter's
// window).
const nearlyAll = 0.9

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

// shape is the kind of failure shape a run shows (docs/design.md, "Failure shapes").
type shape int

const (
	noShape    shape = iota // nothing failed, or nothing succeeded
	depletion               // clean, then only failures from inside a level on
	workingCap              // successes pinned while failures take the rest
	cliff                   // failures in every second from one level on
	shapeless               // failures without any of those shapes
)

// shape names the shape of the failures over time, reading the per-second
// counts of all steps in the order they ran: a depleting resource, a
// working cap or a cliff, in that order of precedence.
func (a *analysis) shape() (shape, string) {
	steps := a.r.Steps
	first := slices.IndexFunc(steps, func(s result.Step) bool { return s.ErrorRatio > 0 })
	tl := a.timeline()
	if first < 0 || len(tl) == 0 || a.peak < 0 || steps[a.peak].Goodput == 0 {
		// Nothing failed, or nothing succeeded: the knee and first-failure
		// lines say it all.
		return noShape, ""
	}
	if l := a.depletion(tl); l != "" {
		return depletion, l
	}
	if l := a.capLine(tl); l != "" {
		return workingCap, l
	}
	if l := a.cliff(tl, first); l != "" {
		return cliff, l
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
		return noShape, ""
	}
	return shapeless, fmt.Sprintf("failures came in %d of %d seconds from %s on, mixed with successes: not a budget running out, a rate held by a limit or a sudden switch to failing",
		failing, secs, a.levelText(steps[first]))
}

// depletion: clean until a number of requests, then only failures. Every
// level before the switch was free of failures, the switch happens inside
// a level (not at a level change, where the level is the likelier cause:
// a cliff), and from it on no attempt succeeds, across any later levels,
// while failures continue. A failure that grows with the level first is
// overload, not depletion.
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
	sw := tl[z].step
	if slices.ContainsFunc(steps[:sw], func(s result.Step) bool { return s.Failed() > 0 }) {
		return ""
	}
	// The last second with successes is the switch itself and may hold
	// both; the seconds of the level before it must be clean.
	for _, t := range tl[:last] {
		if t.step == sw && t.failure > 0 {
			return ""
		}
	}
	// The successes before the switch: every success of the run, since none
	// came after it. From the step totals, so partial seconds count too.
	var n int64
	for _, s := range steps {
		n += s.Succeeded()
	}
	return fmt.Sprintf("clean for %d requests, then only failures from second %d %s on (%s): a depleting resource, exhausted after a number of requests rather than at a level",
		n, tl[z].sec, a.at(steps[sw]), topFailure(steps[sw:]...))
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
