package analysis

import (
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Each breaking point carries its bracket, [the level below it that kept
// the rule, its own level], from a fixed ramp's levels as from a search's.
func TestBreakingPointBrackets(t *testing.T) {
	ramp := reference()
	Analyze(ramp, plan.DefaultRules)

	// The same target searched: the levels out of order, 8 measured twice
	// (its first reading a dip that the second one overrules).
	search := &result.Result{Mode: plan.ModeConcurrency}
	for _, s := range []result.Step{
		clean(1, 100, ms(10)), clean(2, 200, ms(10)), clean(4, 398, ms(10.2)), clean(8, 300, ms(14)),
		clean(16, 404, ms(20)), clean(8, 405, ms(14)), clean(3, 300, ms(10)), clean(128, 395, ms(320)),
		clean(64, 400, ms(120)), clean(96, 398, ms(250)), clean(80, 399, ms(190)),
	} {
		s.Search = result.SearchRefine
		search.Steps = append(search.Steps, s)
	}
	Analyze(search, plan.DefaultRules)

	tests := []struct {
		name  string
		r     *result.Result
		rule  result.Rule
		level float64
		below float64
	}{
		{"ramp knee", ramp, result.RuleKnee, 4, 2},
		{"ramp latency budget", ramp, result.RuleLatencyBudget, 128, 64},
		{"ramp first failure", ramp, result.RuleFirstFailure, 512, 256},
		{"search knee", search, result.RuleKnee, 4, 3},
		{"search latency budget", search, result.RuleLatencyBudget, 96, 80},
	}
	for _, tc := range tests {
		p := tc.r.BreakingPoints.Of(tc.rule)
		if p == nil {
			t.Errorf("%s: never fired", tc.name)
			continue
		}
		if p.Level != tc.level || p.Bracket != [2]float64{tc.below, tc.level} {
			t.Errorf("%s: level %g, bracket %v; want %g, bracket [%g %g]", tc.name, p.Level, p.Bracket, tc.level, tc.below, tc.level)
		}
	}
	if search.PeakThroughput != 405 {
		t.Errorf("search peak %g, want 405: the second reading of 8 connections counts", search.PeakThroughput)
	}
	if c := search.Capacity; c == nil || c.Level != 4 || c.Throughput != 405 || c.Bracket != [2]float64{} {
		t.Errorf("search capacity %+v, want the best goodput within the budgets, 405/s, at 4 connections (398/s there is within 3%%), without a bracket", c)
	}
	if len(search.Steps) != 11 || search.Steps[3].Level != 8 || search.Steps[3].Goodput != 300 {
		t.Errorf("the steps must stay as they ran, the first reading of 8 included: %+v", search.Steps[3])
	}
}
