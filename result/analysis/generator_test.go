package analysis

import (
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// TestGeneratorLimited: a step whose generator CPU ratio reaches the budget,
// or that another run's load overlapped, makes the run invalid, and the
// diagnosis names the step and the cause; one just below the budget does not.
func TestGeneratorLimited(t *testing.T) {
	ramp := func(cpu []float64, overlap []int) *result.Result {
		r := &result.Result{Mode: plan.ModeConcurrency}
		for i, l := range []float64{1, 50} {
			s := clean(l, []int64{5000, 9000}[i], ms(2))
			s.GeneratorCPURatio, s.OverlappingRuns = cpu[i], overlap[i]
			r.Steps = append(r.Steps, s)
		}
		return r
	}
	tight := plan.DefaultRules
	tight.GeneratorCPUBudget = 0.5
	for _, tc := range []struct {
		name      string
		r         *result.Result
		rules     plan.Rules
		valid     bool
		diagnosis []string
		not       []string
	}{
		{
			name: "CPU at the budget", r: ramp([]float64{0.31, 0.9}, []int{0, 0}), rules: plan.DefaultRules,
			diagnosis: []string{"generator-limited at 50 connections (generator CPU 90% of what it may use, budget 90%): the figures there may be the generator's, not the target's; the run is not valid"},
		},
		{
			name: "CPU just below the budget", r: ramp([]float64{0.31, 0.89}, []int{0, 0}), rules: plan.DefaultRules,
			valid: true, not: []string{"generator-limited"},
		},
		{
			name: "the probe's own budget", r: ramp([]float64{0.31, 0.6}, []int{0, 0}), rules: tight,
			diagnosis: []string{"generator-limited at 50 connections (generator CPU 60% of what it may use, budget 50%)"},
		},
		{
			name: "another run overlapped", r: ramp([]float64{0.1, 0.2}, []int{1, 0}), rules: plan.DefaultRules,
			diagnosis: []string{"generator-limited at 1 connection (1 other run's load overlapped it)"},
		},
		{
			name: "both, on two steps", r: ramp([]float64{0.1, 0.95}, []int{2, 3}), rules: plan.DefaultRules,
			diagnosis: []string{"generator-limited at 1 connection (2 other runs' load overlapped it), 50 connections (generator CPU 95% of what it may use, budget 90%; 3 other runs' load overlapped it)"},
		},
		{
			name: "not measured", r: ramp([]float64{0, 0}, []int{0, 0}), rules: plan.DefaultRules,
			valid: true, not: []string{"generator-limited"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Analyze(tc.r, tc.rules)
			if tc.r.Valid != tc.valid {
				t.Errorf("valid = %v, want %v", tc.r.Valid, tc.valid)
			}
			checkDiagnosis(t, tc.r.Diagnosis, tc.diagnosis, tc.not)
		})
	}
}

// A script's own errors (docs/scripts.md) spoil a step past 1% of its
// attempts, and the diagnosis quotes the first; at 1% the run stays valid.
func TestScriptErrorsLimitTheGenerator(t *testing.T) {
	for _, tc := range []struct {
		errs  int64
		valid bool
	}{{50, true}, {51, false}} {
		r := &result.Result{Mode: plan.ModeConcurrency}
		for _, l := range []float64{1, 2} {
			s := clean(l, 1000, ms(2))
			s.Attempts = 5000
			s.Errors = map[string]int64{result.Script.String(): tc.errs}
			s.ScriptError = "sign.star:4:20: key \"id\" not in dict"
			r.Steps = append(r.Steps, s)
		}
		Analyze(r, plan.DefaultRules)
		if r.Valid != tc.valid {
			t.Errorf("%d script errors in 5000 attempts: valid = %v, want %v", tc.errs, r.Valid, tc.valid)
		}
		var want []string
		not := []string{"generator-limited"}
		if !tc.valid {
			want = []string{`generator-limited at 1 connection (the request's script erred in 51 of 5000 attempts, more than 1%: sign.star:4:20: key "id" not in dict), 2 connections`}
			not = nil
		}
		checkDiagnosis(t, r.Diagnosis, want, not)
	}
}
