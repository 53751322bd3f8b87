package analysis

import (
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// ramp is a finished run whose steps have the given goodputs at levels 1, 2, 4, ...
func ramp(name string, goodputs ...float64) result.Result {
	r := result.Result{Name: name, Mode: "concurrency", Ended: result.ResultCompleted, Diagnosis: []string{}}
	level := 1.0
	for _, g := range goodputs {
		r.Steps = append(r.Steps, result.Step{Level: level, Throughput: g, Goodput: g, InFlight: level, LoadHeldRatio: 1,
			Latency: result.Latency{Mean: level / g, P99: level / g}})
		level *= 2
	}
	Analyze(&r, plan.DefaultRules)
	return r
}

func TestMarkControl(t *testing.T) {
	server := ramp("work", 100, 200, 400, 400, 400)
	for _, tc := range []struct {
		name    string
		probe   result.Result
		control result.Result
		limited bool
	}{
		// The control stopped scaling where the probe did: the generator,
		// not the server, is the limit.
		{"control flat at the same level", server, ramp("noop", 100, 200, 400, 405, 410), true},
		{"control flat before the probe's knee", server, ramp("noop", 100, 400, 400, 400, 400), true},
		// The control kept scaling past the probe's knee: a server finding.
		{"control kept scaling", server, ramp("noop", 1000, 2000, 4000, 8000, 16000), false},
		{"control knee after the probe's", server, ramp("noop", 1000, 2000, 4000, 8000, 8100), false},
		// On loopback the control saturates the machine at the probe's knee
		// too, but at a hundred times its rate: the server stopped first.
		{"control flat at the same level, far above", server, ramp("noop", 10000, 20000, 40000, 40500, 41000), false},
		{"control without steps", server, result.Result{Name: "noop"}, false},
		{"probe without a knee", ramp("work", 0, 0, 0), ramp("noop", 100, 100, 100), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.probe
			r.Diagnosis = append([]string{}, r.Diagnosis...)
			validBefore := r.Valid
			MarkControl(&r, tc.control)
			marked := false
			for _, d := range r.Diagnosis {
				if strings.Contains(d, "generator-limited") {
					marked = true
					if !strings.Contains(d, `"noop"`) {
						t.Errorf("diagnosis does not name the control: %q", d)
					}
				}
			}
			if marked != tc.limited {
				t.Errorf("generator-limited diagnosis: %v, want %v (%q)", marked, tc.limited, r.Diagnosis)
			}
			if tc.limited && r.Valid {
				t.Error("a generator-limited run is still valid")
			}
			if !tc.limited && r.Valid != validBefore {
				t.Errorf("valid changed from %v to %v though the control kept scaling", validBefore, r.Valid)
			}
			if k := tc.probe.BreakingPoints.Knee; tc.limited && (r.BreakingPoints.Knee == nil || r.BreakingPoints.Knee.Level != k.Level) {
				t.Error("the breaking points changed: the knee is still reported, only marked")
			}
		})
	}
	if !server.Valid {
		t.Fatal("the reference ramp is not valid to begin with")
	}
}
