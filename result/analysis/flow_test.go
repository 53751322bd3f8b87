package analysis

import (
	"slices"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// The diagnosis of a flow names the step that failed first and the step
// whose latency grows past the knee.
func TestFlowDiagnosis(t *testing.T) {
	flowStep := func(name string, attempts, failed503 int64, p99 time.Duration) result.FlowFigures {
		fs := result.FlowFigures{Name: name, Attempts: attempts, Responses: result.Codes{result.HTTPStatus(200): attempts - failed503},
			HTTPErrors: result.Codes{}, Errors: map[string]int64{}, Latency: result.Latency{P99: p99.Seconds(), P50: p99.Seconds() / 2}}
		if failed503 > 0 {
			fs.Responses[result.HTTPStatus(503)], fs.HTTPErrors[result.HTTPStatus(503)] = failed503, failed503
			fs.ErrorRatio = float64(failed503) / float64(attempts)
		}
		return fs
	}
	steps := []result.Step{
		mk(1, rep(5, 100), rep(5, 0), "", 10*time.Millisecond),
		mk(2, rep(5, 190), rep(5, 0), "", 12*time.Millisecond),
		mk(4, rep(5, 195), rep(5, 0), "", 30*time.Millisecond),
		mk(8, rep(5, 150), rep(5, 50), "503", 80*time.Millisecond),
	}
	steps[0].Flow = []result.FlowFigures{flowStep("login", 500, 0, 5*time.Millisecond), flowStep("item", 500, 0, 5*time.Millisecond)}
	steps[1].Flow = []result.FlowFigures{flowStep("login", 950, 0, 6*time.Millisecond), flowStep("item", 950, 0, 6*time.Millisecond)}
	steps[2].Flow = []result.FlowFigures{flowStep("login", 975, 0, 7*time.Millisecond), flowStep("item", 975, 0, 20*time.Millisecond)}
	steps[3].Flow = []result.FlowFigures{flowStep("login", 1000, 120, 9*time.Millisecond), flowStep("item", 880, 0, 70*time.Millisecond)}
	r := &result.Result{Mode: plan.ModeConcurrency, Steps: steps}
	Analyze(r, plan.DefaultRules)
	for _, want := range []string{
		`first failure at 8 connections: step "login", 503 on 12% of attempts (shedding: capacity ran out)`,
		`step "item" limits the flow: its p99 grows most past 2 connections, from 6ms to 70ms at 8 connections`,
	} {
		if !slices.Contains(r.Diagnosis, want) {
			t.Errorf("diagnosis lacks %q:\n%v", want, r.Diagnosis)
		}
	}
}
