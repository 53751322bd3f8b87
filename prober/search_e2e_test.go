package prober

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/result"
)

// Against a worker pool of 12 serving 20ms each (knee at 12 connections,
// 600/s), the search brackets the knee within 10% of 12 and reports the
// capacity a fixed ramp of the same target measures, in at most 16 levels
// and never more than twice the highest level that broke no rule.
func TestSearchFindsThePoolsKnee(t *testing.T) {
	t.Parallel()
	pool := demo(target.Options{Workers: 12, WorkTime: 20 * time.Millisecond})
	ramp := simRun(t, probeFor(t, "http://127.0.0.1:1/work", `concurrency: [1, 2, 4, 8, 16, 32]
step_duration: 1s`), Options{}, pool)
	p := probeFor(t, "http://127.0.0.1:1/work", `search: {concurrency: {from: 1, max: 256}, precision: 0.1}
step_duration: 1s`)
	r := simRun(t, p, Options{}, pool)

	if r.Ended != result.ResultCompleted || len(r.Steps) > 16 {
		t.Fatalf("result %s with levels %v, want completed in at most 16 levels; error %q", r.Ended, levels(r), r.Error)
	}
	k := r.BreakingPoints.Knee
	if k == nil || !within(k.Level, 12, 0.10) || k.Bracket[1]-k.Bracket[0] > max(1, 0.1*k.Level) {
		t.Errorf("knee %+v, want a bracket within 10%% around 12 connections; levels %v", k, levels(r))
	}
	if r.Capacity == nil || !within(r.Capacity.Throughput, ramp.PeakThroughput, 0.05) {
		t.Errorf("capacity %+v, want within 5%% of the ramp's %.1f/s peak", r.Capacity, ramp.PeakThroughput)
	}
	checkGrowth(t, p, r)
	for _, s := range r.Steps {
		if s.Search != result.SearchGrow && s.Search != result.SearchRefine {
			t.Errorf("level %g: search %q, want grow or refine", s.Level, s.Search)
		}
	}
	t.Logf("ramp: peak %.1f/s, knee %+v; search levels %v, knee %+v, capacity %+v",
		ramp.PeakThroughput, ramp.BreakingPoints.Knee, levels(r), k, r.Capacity)
}

// By rate, with a 50ms budget on the p99 of 1s steps: past 600 req/s the
// queue and its wait grow through each step, so the budget breaks within a
// few percent of the pool's 600/s.
func TestSearchByRateFindsThePoolsBudget(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/work", `search: {rate: {from: 50, max: 5000}}
step_duration: 1s`)
	p.Rules.LatencyBudget = model.Duration(50 * time.Millisecond)
	r := simRun(t, p, Options{}, demo(target.Options{Workers: 12, WorkTime: 20 * time.Millisecond}))

	lb := r.BreakingPoints.LatencyBudget
	if r.Ended != result.ResultCompleted || lb == nil {
		t.Fatalf("result %s, latency budget %+v, levels %v; error %q", r.Ended, lb, levels(r), r.Error)
	}
	if lb.Bracket[0] < 540 || lb.Bracket[1] > 660 {
		t.Errorf("latency budget bracket %v, want within 10%% of 600 req/s; levels %v", lb.Bracket, levels(r))
	}
	checkGrowth(t, p, r)
	t.Logf("levels %v, latency budget %+v, knee %+v", levels(r), lb, r.BreakingPoints.Knee)
}
