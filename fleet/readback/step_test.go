package readback

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// A fleet's search reads each step as soon as every shard's figures of it
// are scraped: here the last step comes with the second read.
func TestStepWaitsForEveryShardThenSums(t *testing.T) {
	p := testProbe(t)
	var queries atomic.Int32
	url := lastStepScrapedLate(t, p, &queries)
	own := shardSteps(runStart, false)[3]
	f := reader(t, url, 0).Step(context.Background(), p, own, time.Now().Add(10*time.Second))
	if len(f.Problems) != 0 || len(f.Steps) != 1 || f.Replicas != 3 {
		t.Fatalf("problems %q, %d steps, %d replicas; want the step of 3 replicas", f.Problems, len(f.Steps), f.Replicas)
	}
	if s := f.Steps[0]; s.Level != 24 || s.Goodput != 12000 || s.Attempts != 24000 {
		t.Errorf("level %g: goodput %g, %d attempts; want 24 with the shards' 12000/s and 24000", s.Level, s.Goodput, s.Attempts)
	}
	if n := queries.Load(); n != 4 {
		t.Errorf("%d queries, want 4: a read without the last step, then the whole one", n)
	}
}

// A shard whose step is not scraped by the next step's start is named.
func TestStepNamesAShardMissingByItsDeadline(t *testing.T) {
	p := testProbe(t)
	rs := threeShards(func(i int) []result.Step {
		if i == 2 {
			return shardSteps(runStart, false)[:3]
		}
		return shardSteps(runStart, false)
	})
	var queries atomic.Int32
	url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
	f := reader(t, url, 0).Step(context.Background(), p, shardSteps(runStart, false)[3], time.Now().Add(100*time.Millisecond))
	if !slices.Equal(f.MissingShards, []int{2}) || len(f.Problems) != 1 || !strings.HasPrefix(f.Problems[0], "shard 2 of 3 has no step in this run at connections 24") {
		t.Errorf("missing %v, problems %q; want shard 2 named", f.MissingShards, f.Problems)
	}
}

// The fleet's run of a search joins the steps read as it went: a level
// measured twice keeps both readings, and the whole is judged as a run
// read back after it ended.
func TestJoinKeepsALevelMeasuredTwice(t *testing.T) {
	p := testProbe(t)
	fleetStep := func(level, goodput float64, at int) *result.Fleet {
		s := result.Step{Level: level, DurationSeconds: 2, Attempts: int64(2 * goodput), Goodput: goodput, Throughput: goodput,
			Responses: result.Codes{result.HTTPStatus(200): int64(2 * goodput)}, LoadHeldRatio: 1,
			Latency: result.Latency{Mean: 0.01, P50: 0.01, P90: 0.01, P95: 0.01, P99: 0.02, P999: 0.02, Max: 0.03},
			Started: runStart.Add(time.Duration(at) * 3 * time.Second)}
		return &result.Fleet{Shards: 3, Replicas: 3, Steps: []result.Step{s}, MissingShards: []int{}, Problems: []string{}, LatencySource: result.LatencyNative}
	}
	reads := []*result.Fleet{fleetStep(6, 6000, 0), fleetStep(12, 9000, 1), fleetStep(24, 12000, 2), fleetStep(12, 12000, 3)}
	reads[1].LatencySource = result.LatencySummaries
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency}
	f := (*Reader)(nil).Join(p, own, reads)
	var got []float64
	for _, s := range f.Steps {
		got = append(got, s.Level)
	}
	if !slices.Equal(got, []float64{6, 12, 24, 12}) || !f.Valid || f.Replicas != 3 {
		t.Fatalf("levels %v, valid %v, %d replicas; want 6, 12, 24, 12 read in turn, valid, 3", got, f.Valid, f.Replicas)
	}
	if f.LatencySource != result.LatencySummaries {
		t.Errorf("latency source %q, want summaries: one step's quantiles were the summaries' mixture", f.LatencySource)
	}
	if f.Capacity == nil || f.Capacity.Level != 12 || f.PeakThroughput != 12000 {
		t.Errorf("capacity %+v, peak %g; want 12000/s at 12, its second reading", f.Capacity, f.PeakThroughput)
	}
	reads[2].MissingShards, reads[2].Problems = []int{1}, []string{"shard 1 of 3 has no step"}
	if f := (*Reader)(nil).Join(p, own, reads); f.Valid || f.Capacity != nil || !slices.Equal(f.MissingShards, []int{1}) || f.Replicas != 2 {
		t.Errorf("with shard 1 missing at 24: valid %v, capacity %+v, missing %v, %d replicas; want invalid, none, [1], 2", f.Valid, f.Capacity, f.MissingShards, f.Replicas)
	}
}
