package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// diagnose explains the analysis in plain language, one finding a line, each
// naming the rule and the numbers behind it: the knee, the latency budget,
// the first failure, the shape of the failures over time, the capacity and
// whether the run held its load.
func (a *analysis) diagnose() []string {
	if len(a.r.Steps) == 0 {
		return []string{"no step was measured: nothing to analyze"}
	}
	out := make([]string, 0, 6)
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	add(a.kneeLine())
	add(a.latencyLine())
	add(a.failureLine())
	for _, line := range a.flowLines() {
		add(line)
	}
	// Failures for want of a file descriptor are the generator's: their
	// shape says nothing of the target (generatorLine names them).
	generatorFailed := a.outOfFiles()
	if kind, shapeLine := a.shape(); !generatorFailed {
		if kind != shapeless || a.limit == nil {
			add(shapeLine) // a limiter's line says what shapeless failures are
		}
		if kind != depletion {
			// A depleted resource explains the fall of goodput on its own.
			add(a.collapseLine())
		}
	}
	add(a.capacityLine())
	add(a.limiterLine())
	add(a.overloadLine())
	add(a.shortfallLine())
	if !generatorFailed {
		add(a.targetCollapseLine())
	}
	add(a.heldLine())
	add(a.generatorLine())
	return out
}

// shortfallLine names the open-loop levels whose achieved rate fell short of
// the offered one: the target did not keep up.
func (a *analysis) shortfallLine() string {
	if a.r.Mode.ClosedLoop() {
		return ""
	}
	var short []result.Step
	for _, s := range a.r.Steps {
		if s.Level > 0 && s.Throughput < heldRatio*s.Level {
			short = append(short, s)
		}
	}
	if len(short) == 0 {
		return ""
	}
	s := short[0]
	line := fmt.Sprintf("%s only %s responses per second came back (%s of the offered rate", a.at(s), fmtNum(s.Throughput), fmtPct(s.Throughput/s.Level))
	if s.Dropped > 0 {
		line += fmt.Sprintf(", %d requests dropped (max_in_flight, or too late to send)", s.Dropped)
	}
	line += "): the target did not keep up with the offered rate"
	return line + a.also(short[1:])
}

// also names more levels where a line's finding holds too: " (also 16
// connections, 32 connections)"; empty when there are none.
func (a *analysis) also(steps []result.Step) string {
	if len(steps) == 0 {
		return ""
	}
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = a.levelText(s)
	}
	return " (also " + strings.Join(names, ", ") + ")"
}

func (a *analysis) kneeLine() string {
	steps := a.r.Steps
	if a.r.Mode == plan.ModePhases {
		return "knee: not computed for phases (the rule reads an escalating ramp, not a profile)"
	}
	if a.rising {
		top, below := steps[len(steps)-1], steps[len(steps)-2]
		return fmt.Sprintf("throughput still rising at the last level, %s (goodput %s/s, the peak, %s above the level below): the knee is not reached up to %s",
			a.levelText(top), fmtNum(top.Goodput), fmtPct(top.Goodput/below.Goodput-1), a.levelText(top))
	}
	if a.knee < 0 {
		return "no successful response at any level: no throughput curve, no knee"
	}
	k, peak := steps[a.knee], steps[a.peak]
	frac := fmtPct(a.kneeFraction)
	switch {
	case len(steps) == 1:
		return fmt.Sprintf("one level only (%s, goodput %s/s): the knee rule fires there, but one level cannot show where throughput stops improving",
			a.levelText(k), fmtNum(k.Goodput))
	}
	line := fmt.Sprintf("throughput stopped improving %s (the knee: goodput %s/s, within %s of the %s/s peak)",
		a.at(k), fmtNum(k.Goodput), frac, fmtNum(peak.Goodput))
	if a.knee == a.peak {
		line = fmt.Sprintf("throughput stopped improving %s (the knee: goodput %s/s is the peak)", a.at(k), fmtNum(k.Goodput))
	}
	return line + a.latencyAfter(a.knee)
}

// latencyAfter describes how the budget's quantile moves from step i to the
// last step with responses.
func (a *analysis) latencyAfter(i int) string {
	steps := a.r.Steps
	last := -1
	lo, hi := math.Inf(1), 0.0
	for j := i; j < len(steps); j++ {
		if steps[j].Throughput <= 0 {
			continue
		}
		v := a.quantile.Of(steps[j].Latency)
		lo, hi = min(lo, v), max(hi, v)
		if j > i {
			last = j
		}
	}
	q0 := a.quantile.Of(steps[i].Latency)
	if last < 0 || q0 <= 0 {
		return ""
	}
	q1 := a.quantile.Of(steps[last].Latency)
	lab := a.quantile.Label
	if q1 >= 1.5*q0 {
		return fmt.Sprintf("; %s grows from %s to %s after it (%s)", lab, fmtSeconds(q0), fmtSeconds(q1), a.at(steps[last]))
	}
	if lo == hi {
		return fmt.Sprintf("; %s stays at %s after it", lab, fmtSeconds(lo))
	}
	return fmt.Sprintf("; %s stays between %s and %s after it", lab, fmtSeconds(lo), fmtSeconds(hi))
}

func (a *analysis) latencyLine() string {
	steps := a.r.Steps
	lab, budget := a.quantile.Label, fmtSeconds(a.budget)
	if a.latency >= 0 {
		s := steps[a.latency]
		return fmt.Sprintf("%s latency exceeded the %s budget %s (the latency budget: %s %s, goodput %s/s)",
			lab, budget, a.at(s), lab, fmtSeconds(a.quantile.Of(s.Latency)), fmtNum(s.Goodput))
	}
	h := -1
	for i, s := range steps {
		if s.Throughput > 0 && (h < 0 || a.quantile.Of(s.Latency) > a.quantile.Of(steps[h].Latency)) {
			h = i
		}
	}
	if h < 0 {
		return fmt.Sprintf("no response at any level: the %s %s budget could not be judged", budget, lab)
	}
	return fmt.Sprintf("%s latency stayed within the %s budget %s (highest: %s %s)",
		lab, budget, a.everyLevel(), fmtSeconds(a.quantile.Of(steps[h].Latency)), a.at(steps[h]))
}

func (a *analysis) failureLine() string {
	steps := a.r.Steps
	if a.failure >= 0 {
		s := steps[a.failure]
		head := "first failure " + a.at(s)
		if a.errBudget > 0 {
			head += fmt.Sprintf(" (error ratio %s, above the %s budget)", fmtPct(s.ErrorRatio), fmtPct(a.errBudget))
		}
		return head + ": " + describeFailures(s)
	}
	w := -1
	for i, s := range steps {
		if s.ErrorRatio > 0 && (w < 0 || s.ErrorRatio > steps[w].ErrorRatio) {
			w = i
		}
	}
	if w < 0 {
		return "no attempt failed " + a.anyLevel()
	}
	return fmt.Sprintf("error ratio stayed within the %s budget %s (highest: %s %s, %s)",
		fmtPct(a.errBudget), a.everyLevel(), fmtPct(steps[w].ErrorRatio), a.at(steps[w]), describeFailures(steps[w]))
}

func (a *analysis) capacityLine() string {
	budgets := fmt.Sprintf("the %s %s budget and ", fmtSeconds(a.budget), a.quantile.Label)
	if a.errBudget == 0 {
		budgets += "without a failed attempt"
	} else {
		budgets += "the " + fmtPct(a.errBudget) + " error budget"
	}
	if a.capacity < 0 {
		return "no capacity: no level was within " + budgets
	}
	s, b := a.r.Steps[a.capacity], a.r.Steps[a.best]
	line := fmt.Sprintf("capacity %s/s %s: the highest goodput within %s", fmtNum(b.Goodput), a.at(s), budgets)
	if a.capacity != a.best {
		line += fmt.Sprintf(" (read %s; %s, %s/s, is the lowest level within %s of it)",
			a.at(b), a.levelText(s), fmtNum(s.Goodput), fmtPct(capacityBand))
	}
	if low := a.fallsPastPeak(); low >= 0 {
		f := a.r.Steps[low]
		line += fmt.Sprintf("; goodput falls past it, to %s/s %s (%s less)", fmtNum(f.Goodput), a.at(f), fmtPct(1-f.Goodput/b.Goodput))
	}
	return line
}

// heldLine names the levels that make the run invalid: those below the
// first failure that did not hold their load.
func (a *analysis) heldLine() string {
	var bad []result.Step
	for _, s := range a.judged() {
		if !a.held(s) {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	s := bad[0]
	var line string
	switch {
	case s.Attempts == 0:
		line = fmt.Sprintf("%s no attempt completed", a.at(s))
	case a.r.Mode.ClosedLoop():
		n, attempts := fmtNum(s.LoadHeldRatio*s.Level), "attempts"
		if n == "1" {
			attempts = "attempt"
		}
		line = fmt.Sprintf("%s the generator kept only %s %s in flight (load held %s)", a.at(s), n, attempts, fmtPct(s.LoadHeldRatio))
	default:
		line = fmt.Sprintf("%s the generator sent only %s requests per second", a.at(s), fmtNum(sentRate(s)))
	}
	if noResp := noResponses(s); s.Attempts > 0 && noResp*2 > s.Attempts {
		line += fmt.Sprintf(", %s of attempts got no response (%s)", fmtPct(float64(noResp)/float64(s.Attempts)), topReason(s))
	}
	line += ": the run did not hold the load it claims"
	return line + a.also(bad[1:])
}

// levelText names a step's load: "4 connections", "400 req/s", or for phases
// `phase "sustained" (5 req/s)`.
func (a *analysis) levelText(s result.Step) string { return result.StepText(a.r.Words(), s) }

func (a *analysis) at(s result.Step) string {
	if a.r.Mode == plan.ModePhases {
		return "in " + a.levelText(s)
	}
	return "at " + a.levelText(s)
}

func (a *analysis) anyLevel() string {
	if a.r.Mode == plan.ModePhases {
		return "in any phase"
	}
	return "at any level"
}

func (a *analysis) everyLevel() string {
	if a.r.Mode == plan.ModePhases {
		return "in every phase"
	}
	return "at every level"
}
