package analysis

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// heldRatio is the lowest load_held_ratio at which a level counts as having
// held its load. Not 1: even on loopback a closed-loop worker spends some time
// between one response and its next request (reading, recording, scheduling),
// time Little's law does not see as in flight, and an open-loop level loses
// its last requests still in flight at the end of the window. Not much lower:
// a level that did not hold its load reads far below (the reference failure
// read 0.09: 47 in flight at 512 connections).
const heldRatio = 0.8

// LatencyRule is the latency figure the rules judge and the budget it is
// held to, in seconds. The figure is the nearest one not below
// rules.latency_quantile, so the budget is never judged on a more lenient
// quantile than configured (0.98 reads p99; above 0.999 reads the max).
func LatencyRule(rules plan.Rules) (result.Quantile, float64) {
	budget := time.Duration(rules.LatencyBudget).Seconds()
	for _, lq := range result.Quantiles {
		if rules.LatencyQuantile <= lq.Q+1e-12 {
			return lq, budget
		}
	}
	return result.Quantiles[len(result.Quantiles)-1], budget
}

// analysis is one Result's rules applied to its steps; indices into Steps,
// -1 when a rule never fired.
type analysis struct {
	r            *result.Result
	kneeFraction float64
	quantile     result.Quantile
	budget       float64 // seconds
	errBudget    float64
	cpuBudget    float64
	peak         int
	knee         int
	latency      int
	failure      int
	// best is the step of the highest goodput within the budgets, and
	// capacity the lowest level before it whose goodput is within
	// capacityBand of it: the level capacity is reported at.
	best     int
	capacity int
	// rising says the knee rule fired at the highest level only, so the
	// knee is not reached: goodput still rises there.
	rising bool
	// limit is a limiter's pass rate (limiter.go); nil without one.
	limit *result.Limiter
	// past is the step of lowest goodput past capacity's level, and over
	// its grade (overload.go); -1 and nil without one.
	past int
	over *result.Overload
}

// capacityBand is how close to the highest goodput within the budgets a
// lower level's goodput must be for capacity to be reported at it: a hard
// cap of 8 reads 304/s at 8 and 296/s at 16 in turn, and its level must not
// flip with that noise (docs/measurement.md, "Capacity").
const capacityBand = 0.03

// Analyze fills r.PeakThroughput, r.BreakingPoints, r.ReachedUpTo, r.Capacity,
// r.Limiter, r.Overload, r.FallsPastPeak, r.Model, r.Valid and
// r.Diagnosis from r.Steps and r.Mode with the probe's rules, as config
// loaded them (its defaults applied). Steps are taken in the order they ran.
//
// Decisions the rules of docs/design.md leave to the code:
//   - ErrorRatioBudget 0 is meaningful: any failed attempt fires
//     first_failure.
//   - The knee needs a peak above zero: when nothing succeeded there is no
//     throughput curve to bend.
//   - phases: the knee rule is a statement about an escalating ramp; over a
//     profile (warm up, ramp up, sustained, ...) it would only name the first
//     phase run near the top rate. It stays nil. latency_budget and
//     first_failure apply to phases as to levels, in the order they ran.
//   - The knee is not reached (nil) when it fires at the highest of two
//     or more levels: there goodput is the peak and lies more than
//     1 − knee_fraction above the level below, still rising. A single
//     level keeps its knee, which the diagnosis qualifies.
//   - Capacity is the highest goodput among the steps before the first
//     breach of either budget (a step with no attempt at all is a breach
//     too: nothing shows it within budget), at the lowest of those levels
//     whose goodput is within capacityBand of it. A level
//     above a breach that happens to read clean again is past the breaking
//     point; counting it would let one lucky level raise the number
//     capacity alerts follow. FallsPastPeak says that a higher level than
//     capacity's read more than pastPeakDrop below its goodput.
//   - Valid needs at least one step: a run that measured nothing is not a
//     valid measurement. Otherwise every step below the first failure (all
//     steps when nothing failed) must have held its load, and no step may
//     be generator-limited (docs/measurement.md).
//   - The rules read the levels in order of level (a search runs them out
//     of order); a level measured twice counts by its later measurement
//     (ByLevel).
//   - A breaking point's bracket starts at the level just below it, which
//     kept the rule: each rule fires at the lowest level that breaks it.
//   - A step cut short by a guard or the pause switch is left out of every
//     figure: it is no whole measurement of its level.
func Analyze(r *result.Result, rules plan.Rules) {
	if whole := r.Whole(); len(whole) < len(r.Steps) {
		w := *r
		w.Steps = whole
		Analyze(&w, rules)
		w.Steps = r.Steps
		*r = w
		return
	}
	view := *r
	view.Steps = ByLevel(r.Mode, r.Steps)
	a := newAnalysis(&view, rules)

	r.PeakThroughput = 0
	if a.peak >= 0 {
		r.PeakThroughput = view.Steps[a.peak].Goodput
	}
	r.BreakingPoints = result.BreakingPoints{
		Knee:          a.breakingPoint(a.knee),
		LatencyBudget: a.breakingPoint(a.latency),
		FirstFailure:  a.breakingPoint(a.failure),
	}
	r.ReachedUpTo = 0
	if r.Mode != plan.ModePhases && len(view.Steps) > 0 {
		r.ReachedUpTo = view.Steps[len(view.Steps)-1].Level
	}
	r.Capacity = a.point(a.capacity)
	if r.Capacity != nil {
		r.Capacity.Throughput = view.Steps[a.best].Goodput
	}
	r.Limiter = a.limit
	r.Overload = a.over
	r.FallsPastPeak = a.fallsPastPeak() >= 0
	r.Model = a.model()
	r.Valid = a.valid()
	r.Diagnosis = a.diagnose()
}

func newAnalysis(r *result.Result, rules plan.Rules) *analysis {
	a := &analysis{r: r, peak: -1, knee: -1, latency: -1, failure: -1, best: -1, capacity: -1}
	a.kneeFraction = rules.KneeFraction
	a.quantile, a.budget = LatencyRule(rules)
	a.cpuBudget = rules.GeneratorCPUBudget
	a.errBudget = max(rules.ErrorRatioBudget, 0)
	if math.IsNaN(a.errBudget) {
		a.errBudget = 0
	}

	steps := r.Steps
	for i, s := range steps {
		if a.peak < 0 || s.Goodput > steps[a.peak].Goodput {
			a.peak = i
		}
	}
	if r.Mode != plan.ModePhases && a.peak >= 0 && steps[a.peak].Goodput > 0 {
		want := a.kneeFraction * steps[a.peak].Goodput
		for i, s := range steps {
			if s.Goodput >= want {
				a.knee = i
				break
			}
		}
		if a.knee > 0 && a.knee == len(steps)-1 {
			a.knee, a.rising = -1, true
		}
	}
	for i, s := range steps {
		if a.latency < 0 && a.overLatency(s) {
			a.latency = i
		}
		if a.failure < 0 && a.overErrors(s) {
			a.failure = i
		}
	}
	within := len(steps)
	for i, s := range steps {
		if a.overLatency(s) || a.overErrors(s) || s.Attempts == 0 {
			within = i
			break
		}
		if a.best < 0 || s.Goodput > steps[a.best].Goodput {
			a.best = i
		}
	}
	a.capacity = a.best
	if a.best >= 0 && r.Mode != plan.ModePhases {
		a.capacity = slices.IndexFunc(steps[:within], func(s result.Step) bool {
			return s.Goodput >= (1-capacityBand)*steps[a.best].Goodput
		})
	}
	a.limit = a.limiter()
	a.past = a.pastCapacity()
	a.over = a.overload()
	return a
}

// overLatency reports whether s's latency quantile exceeds the budget.
func (a *analysis) overLatency(s result.Step) bool { return a.quantile.Of(s.Latency) > a.budget }

// overErrors reports whether s is outside the error budget: any failed
// attempt when the budget is 0, else an error ratio above it.
func (a *analysis) overErrors(s result.Step) bool {
	if a.errBudget == 0 {
		return s.ErrorRatio > 0
	}
	return s.ErrorRatio > a.errBudget
}

func (a *analysis) point(i int) *result.Point {
	if i < 0 {
		return nil
	}
	s := a.r.Steps[i]
	return &result.Point{Level: s.Level, Throughput: s.Goodput}
}

// breakingPoint is point(i) with its bracket, for a rule that fired at step i.
func (a *analysis) breakingPoint(i int) *result.Point {
	p := a.point(i)
	if p != nil && a.r.Mode != plan.ModePhases {
		p.Bracket[1] = p.Level
		if i > 0 {
			p.Bracket[0] = a.r.Steps[i-1].Level
		}
	}
	return p
}

// ByLevel is steps in order of level, each level once, as the rules read
// them: the later of two measurements of a level is the one that counts, as
// a search measures a level again to settle a reading that contradicts its
// neighbours (docs/search.md, "Noise"). Phases keep the order they ran in.
// Steps already in order come back as they are.
func ByLevel(m plan.Mode, steps []result.Step) []result.Step {
	rising := true
	for i := 1; i < len(steps) && rising; i++ {
		rising = steps[i].Level > steps[i-1].Level
	}
	if m == plan.ModePhases || rising {
		return steps
	}
	last := make(map[float64]int, len(steps))
	for i, s := range steps {
		last[s.Level] = i
	}
	out := make([]result.Step, 0, len(last))
	for _, i := range last {
		out = append(out, steps[i])
	}
	slices.SortFunc(out, func(a, b result.Step) int { return cmp.Compare(a.Level, b.Level) })
	return out
}

// held reports whether the generator put s's load on the target. In closed
// loop that is load_held_ratio: its attempts in flight, each from its send
// to its outcome (one waiting for its timeout is held load), against the
// connections asked for. In
// open loop it is the requests sent (or dropped for want of room under
// max_in_flight) against the offered rate: an achieved rate below the offered
// one is what the target did, a finding of the run (see shortfallLine), not
// a run that failed to hold its load.
func (a *analysis) held(s result.Step) bool {
	if a.r.Mode.ClosedLoop() {
		return s.LoadHeldRatio >= heldRatio
	}
	return s.Level <= 0 || s.DurationSeconds <= 0 || sentRate(s)/s.Level >= heldRatio
}

// sentRate is the requests per second an open-loop step scheduled and sent or dropped.
func sentRate(s result.Step) float64 { return float64(s.Attempts+s.Dropped) / s.DurationSeconds }

// judged is the steps whose load-holding counts toward validity: those
// below the first failure. At and past it the target, not the generator,
// decides how much of the load is held.
func (a *analysis) judged() []result.Step {
	if a.failure >= 0 {
		return a.r.Steps[:a.failure]
	}
	return a.r.Steps
}

func (a *analysis) valid() bool {
	if len(a.r.Steps) == 0 {
		return false
	}
	for _, s := range a.judged() {
		if !a.held(s) {
			return false
		}
	}
	for _, s := range a.r.Steps {
		if a.generatorLimited(s) {
			return false
		}
	}
	return true
}

// generatorLimited reports whether s's figures may be the generator's
// rather than the target's: the process used at least generator_cpu_budget
// of the CPU it may use, another run's load overlapped the step's, or the
// request's script erred in more than scriptErrorShare of its attempts. A
// step where the ratio was not measured (0) is judged on overlap alone.
func (a *analysis) generatorLimited(s result.Step) bool {
	return s.OverlappingRuns > 0 || a.cpuBudget > 0 && s.GeneratorCPURatio >= a.cpuBudget ||
		s.Errors[result.Generator.String()] > 0 || scriptErred(s)
}

// scriptErrorShare is the share of a step's attempts a script may spoil
// with its own errors before the step is generator-limited
// (docs/scripts.md).
const scriptErrorShare = 0.01

func scriptErred(s result.Step) bool {
	return float64(s.Errors[result.Script.String()]) > scriptErrorShare*float64(s.Attempts)
}

// outOfFiles reports whether any step's attempts found no free file
// descriptor: its failures are the generator's, whatever their shape.
func (a *analysis) outOfFiles() bool {
	return slices.ContainsFunc(a.r.Steps, func(s result.Step) bool { return s.Errors[result.Generator.String()] > 0 })
}

// pastPeakDrop is how far goodput must fall below capacity's, at a higher
// level, for the report to say it falls past it: twice the knee rule's
// default band, so that a busy machine's noise (7.7% seen at 8 connections
// on a pool of 4) does not raise it, while the Universal Scalability Law's
// fall from 365/s to 303/s (17%) does.
const pastPeakDrop = 0.10

// fallsPastPeak is the step of lowest goodput above the highest goodput
// within the budgets whose goodput fell more than pastPeakDrop below it; -1
// when none did (or for phases, a profile rather than an escalating ramp).
func (a *analysis) fallsPastPeak() int {
	if a.best < 0 || a.r.Mode == plan.ModePhases {
		return -1
	}
	steps, c := a.r.Steps, a.r.Steps[a.best]
	low := -1
	for i := a.best + 1; i < len(steps); i++ {
		s := steps[i]
		if s.Level > c.Level && s.Goodput < (1-pastPeakDrop)*c.Goodput && (low < 0 || s.Goodput < steps[low].Goodput) {
			low = i
		}
	}
	return low
}
