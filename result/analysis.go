package result

import (
	"math"
	"time"

	"github.com/loadprobe/loadprobe/config"
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
func LatencyRule(rules config.Rules) (Quantile, float64) {
	budget := time.Duration(rules.LatencyBudget).Seconds()
	for _, lq := range Quantiles {
		if rules.LatencyQuantile <= lq.Q+1e-12 {
			return lq, budget
		}
	}
	return Quantiles[len(Quantiles)-1], budget
}

// analysis is one Result's rules applied to its steps; indices into Steps,
// -1 when a rule never fired.
type analysis struct {
	r            *Result
	kneeFraction float64
	quantile     Quantile
	budget       float64 // seconds
	errBudget    float64
	peak         int
	knee         int
	latency      int
	failure      int
	capacity     int
}

// Analyze fills r.PeakThroughput, r.BreakingPoints, r.Capacity, r.Model, r.Valid and
// r.Diagnosis from r.Steps and r.Mode with the probe's rules, as config
// loaded them (its defaults applied). Steps are taken in the order they ran.
//
// Decisions where DESIGN is silent:
//   - ErrorRatioBudget 0 is meaningful: any failed attempt fires
//     first_failure.
//   - The knee needs a peak above zero: when nothing succeeded there is no
//     throughput curve to bend.
//   - phases: the knee rule is a statement about an escalating ramp; over a
//     profile (warm up, ramp up, sustained, ...) it would only name the first
//     phase run near the top rate. It stays nil. latency_budget and
//     first_failure apply to phases as to levels, in the order they ran.
//   - Capacity is the highest level within both budgets among the steps
//     before the first breach of either (a step with no attempt at all is a
//     breach too: nothing shows it within budget). A level above a breach
//     that happens to read clean again is past the breaking point; counting
//     it would let one lucky level raise the number capacity alerts follow.
//     For a ramp that is the step just below the first breach; for phases,
//     the highest rate among the phases before it (the first on a tie).
//   - Valid needs at least one step: a run that measured nothing is not a
//     valid measurement. Otherwise every step up to and including the first
//     failure (all steps when nothing failed) must have held its load.
func Analyze(r *Result, rules config.Rules) {
	a := newAnalysis(r, rules)

	r.PeakThroughput = 0
	if a.peak >= 0 {
		r.PeakThroughput = r.Steps[a.peak].Goodput
	}
	r.BreakingPoints = BreakingPoints{
		Knee:          a.point(a.knee),
		LatencyBudget: a.point(a.latency),
		FirstFailure:  a.point(a.failure),
	}
	r.Capacity = a.point(a.capacity)
	r.Model = a.model()
	r.Valid = a.valid()
	r.Diagnosis = a.diagnose()
}

func newAnalysis(r *Result, rules config.Rules) *analysis {
	a := &analysis{r: r, peak: -1, knee: -1, latency: -1, failure: -1, capacity: -1}
	a.kneeFraction = rules.KneeFraction
	a.quantile, a.budget = LatencyRule(rules)
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
	if r.Mode != config.ModePhases && a.peak >= 0 && steps[a.peak].Goodput > 0 {
		want := a.kneeFraction * steps[a.peak].Goodput
		for i, s := range steps {
			if s.Goodput >= want {
				a.knee = i
				break
			}
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
	for i, s := range steps {
		if a.overLatency(s) || a.overErrors(s) || s.Attempts == 0 {
			break
		}
		if a.capacity < 0 || s.Level > steps[a.capacity].Level {
			a.capacity = i
		}
	}
	return a
}

// overLatency reports whether s's latency quantile exceeds the budget.
func (a *analysis) overLatency(s Step) bool { return a.quantile.Of(s.Latency) > a.budget }

// overErrors reports whether s is outside the error budget: any failed
// attempt when the budget is 0, else an error ratio above it.
func (a *analysis) overErrors(s Step) bool {
	if a.errBudget == 0 {
		return s.ErrorRatio > 0
	}
	return s.ErrorRatio > a.errBudget
}

func (a *analysis) point(i int) *Point {
	if i < 0 {
		return nil
	}
	s := a.r.Steps[i]
	return &Point{Level: s.Level, Throughput: s.Goodput}
}

// held reports whether the generator put s's load on the target. In closed
// loop that is Little's-law in-flight against the connections asked for. In
// open loop it is the requests sent (or dropped for want of room under
// max_in_flight) against the offered rate: an achieved rate below the offered
// one is what the target did, a finding of the run (see shortfallLine), not
// a run that failed to hold its load.
func (a *analysis) held(s Step) bool {
	if a.r.Mode.ClosedLoop() {
		return s.LoadHeldRatio >= heldRatio
	}
	return s.Level <= 0 || s.DurationSeconds <= 0 || sentRate(s)/s.Level >= heldRatio
}

// sentRate is the requests per second an open-loop step scheduled and sent or dropped.
func sentRate(s Step) float64 { return float64(s.Attempts+s.Dropped) / s.DurationSeconds }

// validUpTo is the last step whose load-holding counts toward validity.
func (a *analysis) validUpTo() int {
	if a.failure >= 0 {
		return a.failure
	}
	return len(a.r.Steps) - 1
}

func (a *analysis) valid() bool {
	if len(a.r.Steps) == 0 {
		return false
	}
	for _, s := range a.r.Steps[:a.validUpTo()+1] {
		if !a.held(s) {
			return false
		}
	}
	return true
}
