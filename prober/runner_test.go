package prober

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// WithControl's one answer for every way the probe and its control end.
func TestWithControl(t *testing.T) {
	// A control that stopped scaling where the probe did: the generator's knee.
	knee := func(name string, res result.RunResult) result.Result {
		return result.Result{Name: name, Ended: res, Valid: true, PeakThroughput: 100,
			Steps:          []result.Step{{Level: 1}, {Level: 2}, {Level: 4}},
			BreakingPoints: result.BreakingPoints{Knee: &result.Point{Level: 2, Throughput: 100}}}
	}
	for _, tc := range []struct {
		name           string
		probe, control result.RunResult
		controlRuns    bool
		want           result.RunResult
		valid          bool
	}{
		{"both completed", result.ResultCompleted, result.ResultCompleted, true, result.ResultCompleted, false},
		{"probe aborted", result.ResultAborted, result.ResultCompleted, true, result.ResultAborted, false},
		// A probe that could not run is a failed result, valid never.
		{"probe failed", result.ResultFailed, result.ResultCompleted, false, result.ResultFailed, false},
		{"probe canceled", result.ResultCanceled, result.ResultCompleted, false, result.ResultCanceled, true},
		{"control canceled", result.ResultCompleted, result.ResultCanceled, true, result.ResultCanceled, true},
		{"control failed", result.ResultCompleted, result.ResultFailed, true, result.ResultCompleted, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran, watched []string
			run := Runner(func(_ context.Context, p *plan.Probe, _ Options) (result.Result, error) {
				ran = append(ran, p.Name)
				if p.Name == "p" && tc.probe == result.ResultFailed || p.Name == "c" && tc.control == result.ResultFailed {
					return result.Result{}, errors.New("no client")
				}
				if p.Name == "p" {
					return knee("p", tc.probe), nil
				}
				return knee("c", tc.control), nil
			})
			c := &Control{
				Probe:   &plan.Probe{Name: "c"},
				Started: func(r result.Result) { watched = append(watched, "started after "+string(r.Ended)) },
				Ended:   func(r result.Result) { watched = append(watched, "ended "+string(r.Ended)) },
			}
			r := run.WithControl(context.Background(), &plan.Probe{Name: "p"}, Options{}, c)
			wantRan, wantWatched := []string{"p"}, []string(nil)
			if tc.controlRuns {
				wantRan = []string{"p", "c"}
				wantWatched = []string{"started after " + string(tc.probe), "ended " + string(tc.control)}
			}
			if !slices.Equal(ran, wantRan) || !slices.Equal(watched, wantWatched) {
				t.Errorf("ran %v, watched %v; want %v, %v", ran, watched, wantRan, wantWatched)
			}
			if r.Ended != tc.want || r.Valid != tc.valid {
				t.Errorf("result %s, valid %v; want %s, valid %v", r.Ended, r.Valid, tc.want, tc.valid)
			}
			if failed := r.Ended == result.ResultFailed; failed != (r.Error == "no client") || failed && r.Name != "p" {
				t.Errorf("result %s of %q, error %q; a failed run says why, under the probe's name", r.Ended, r.Name, r.Error)
			}
		})
	}
	// Without a control, the probe's run alone.
	n := 0
	r := Runner(func(context.Context, *plan.Probe, Options) (result.Result, error) {
		n++
		return result.Result{Ended: result.ResultCompleted}, nil
	}).WithControl(context.Background(), &plan.Probe{Name: "p"}, Options{}, nil)
	if n != 1 || r.Ended != result.ResultCompleted {
		t.Errorf("%d runs, result %s; want the probe's one run", n, r.Ended)
	}
}

// The control of a search runs the levels the search measured, in order of
// level, each once, whatever load its own config names.
func TestWithControlOfASearchRunsItsLevels(t *testing.T) {
	var controlLoad plan.Load
	run := Runner(func(_ context.Context, p *plan.Probe, _ Options) (result.Result, error) {
		if p.Name == "c" {
			controlLoad = p.Load
			return result.Result{Name: "c", Ended: result.ResultCompleted}, nil
		}
		var steps []result.Step
		for _, l := range []float64{1, 2, 4, 8, 16, 32, 12, 10, 10, 11} {
			steps = append(steps, result.Step{Level: l, Search: result.SearchRefine})
		}
		return result.Result{Name: "p", Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: steps}, nil
	})
	c := &Control{Probe: &plan.Probe{Name: "c", Load: plan.Load{Concurrency: []int{1, 1024}, StepDuration: 7}}}
	run.WithControl(context.Background(), &plan.Probe{Name: "p"}, Options{}, c)
	if want := []int{1, 2, 4, 8, 10, 11, 12, 16, 32}; !slices.Equal(controlLoad.Concurrency, want) || controlLoad.StepDuration != 7 {
		t.Errorf("control ran %v (step %v), want %v at its own step_duration", controlLoad.Concurrency, controlLoad.StepDuration, want)
	}
}
