package analysis

import (
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Past capacity, the lowest goodput over the capacity grades how the target
// fails: shedding keeps its rate (graceful), queueing costs some of it
// (degraded), a pile-up loses most of it (collapse). A run with no level
// past capacity's, and a phases profile, have no grade.
func TestOverloadGrade(t *testing.T) {
	t.Parallel()
	ramp := func(goodputs ...int64) *result.Result {
		r := &result.Result{Mode: plan.ModeConcurrency}
		for i, g := range goodputs {
			fail := int64(0)
			if i >= 3 {
				fail = 400 // past capacity: failures as well
			}
			r.Steps = append(r.Steps, mk(float64(int(1)<<i), []int64{g, g}, []int64{fail, fail}, "503", ms(5)))
		}
		return r
	}
	for _, tc := range []struct {
		name     string
		r        *result.Result
		grade    string
		retained float64
		line     string
	}{
		{"shedding", ramp(100, 200, 400, 396, 392), result.OverloadGraceful, 0.98,
			"overload graceful: goodput past capacity kept 98% of it at worst (392/s at 16 connections): it turns load away and keeps serving"},
		{"queueing", ramp(100, 200, 400, 300, 240), result.OverloadDegraded, 0.6,
			"overload degraded: goodput past capacity kept 60% of it at worst (240/s at 16 connections), below 90%: more load costs work done"},
		{"pile-up", ramp(100, 200, 400, 150, 40), result.OverloadCollapse, 0.1,
			"overload collapse: goodput past capacity kept 10% of it at worst (40/s at 16 connections), below 50%: past its limit it serves little"},
	} {
		Analyze(tc.r, plan.DefaultRules)
		o := tc.r.Overload
		if o == nil || o.Grade != tc.grade || !approx(o.GoodputRetained, tc.retained, 1e-9) {
			t.Errorf("%s: overload %+v, want %s with %.2f retained", tc.name, o, tc.grade, tc.retained)
		}
		checkDiagnosis(t, tc.r.Diagnosis, []string{tc.line}, nil)
	}
	within := ramp(100, 200, 400)
	Analyze(within, plan.DefaultRules)
	if within.Overload != nil {
		t.Errorf("a ramp ending at its capacity graded %+v, want no grade", within.Overload)
	}
	phases := ramp(100, 200, 400, 150)
	phases.Mode = plan.ModePhases
	Analyze(phases, plan.DefaultRules)
	if phases.Overload != nil {
		t.Errorf("a phases profile graded %+v, want no grade", phases.Overload)
	}
}
