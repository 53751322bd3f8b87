package prober

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/fleet/readback"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// fakePrometheus is where the replicas of a fleet in one bubble meet, as
// they meet in the Prometheus that scrapes them: each replica's OnStep
// posts its steps, and Step sums a step once every shard has posted it
// (throughput, goodput, attempts and codes added, the load held weighted
// by each shard's connections, each latency quantile the highest shard's).
// Join is fleet/readback's own.
type fakePrometheus struct {
	readback.Reader
	shards int
	mu     sync.Mutex
	posted map[int][]result.Step // each shard's steps of its run so far
}

func newFakePrometheus(shards int) *fakePrometheus {
	return &fakePrometheus{shards: shards, posted: map[int][]result.Step{}}
}

// onStep is what shard's run hands its steps to.
func (f *fakePrometheus) onStep(shard int) func(result.Result) {
	return func(r result.Result) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.posted[shard] = r.Steps
	}
}

func (f *fakePrometheus) Step(ctx context.Context, p *plan.Probe, own result.Step, by time.Time) *result.Fleet {
	for {
		sum, missing := f.sum(p, own)
		if len(missing) == 0 || !time.Now().Before(by) || ctx.Err() != nil {
			read := &result.Fleet{Shards: f.shards, Steps: []result.Step{sum}, MissingShards: missing, Problems: []string{}}
			for _, i := range missing {
				read.Problems = append(read.Problems, fmt.Sprintf("shard %d of %d has no step at %g", i, f.shards, own.Level))
			}
			return read
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sum adds up every shard's latest step at own's level that started with
// own, and names the shards without one.
func (f *fakePrometheus) sum(p *plan.Probe, own result.Step) (result.Step, []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := result.Step{Level: own.Level, Started: own.Started, DurationSeconds: own.DurationSeconds, Responses: result.Codes{}, Errors: map[string]int64{}}
	var failed int64
	var held float64
	missing := []int{}
	for i := range f.shards {
		var part *result.Step
		for j, st := range f.posted[i] {
			if st.Level == own.Level && math.Abs(st.Started.Sub(own.Started).Seconds()) < time.Duration(p.Load.StepDuration).Seconds()/2 {
				part = &f.posted[i][j]
			}
		}
		if part == nil {
			missing = append(missing, i)
			continue
		}
		s.Throughput += part.Throughput
		s.Goodput += part.Goodput
		s.Attempts += part.Attempts
		s.InFlight += part.InFlight
		failed += part.Failed()
		for c, n := range part.Responses {
			s.Responses[c] += n
		}
		for e, n := range part.Errors {
			s.Errors[e] += n
		}
		held += part.LoadHeldRatio * float64(fleet.Shard{Index: i, Count: f.shards}.Connections(int(own.Level)))
		l := &s.Latency
		l.P50, l.P90, l.P95, l.P99, l.P999, l.Max = max(l.P50, part.Latency.P50), max(l.P90, part.Latency.P90), max(l.P95, part.Latency.P95),
			max(l.P99, part.Latency.P99), max(l.P999, part.Latency.P999), max(l.Max, part.Latency.Max)
	}
	if s.Attempts > 0 {
		s.ErrorRatio = float64(failed) / float64(s.Attempts)
	}
	s.LoadHeldRatio = held / own.Level
	return s, missing
}

// fleetSearchProbe searches a /work pool of 12 workers of 20ms by
// concurrency.
func fleetSearchProbe(t *testing.T) *plan.Probe {
	return probeFor(t, "http://127.0.0.1:1/work", `search: {concurrency: {from: 1, max: 64}, precision: 0.1, max_steps: 12}
step_duration: 2s`)
}

// searchFleet runs p on shards replicas of a fleet at once in one bubble,
// against one /work pool of 12 workers of 20ms; a replica of posting
// false runs but is never seen by the others (dead to Prometheus).
func searchFleet(t *testing.T, p *plan.Probe, posting []bool) []result.Result {
	t.Helper()
	runs := make([]result.Result, len(posting))
	synctest.Test(t, func(*testing.T) {
		h := target.New(target.Options{Workers: 12, WorkTime: 20 * time.Millisecond})
		prom := newFakePrometheus(len(posting))
		align := time.Now().Add(time.Second)
		var wg sync.WaitGroup
		for i, posts := range posting {
			opts := Options{Shard: fleet.Shard{Index: i, Count: len(posting)}, Align: align, FleetSteps: prom, OnStep: func(result.Result) {}}
			if posts {
				opts.OnStep = prom.onStep(i)
			}
			wg.Go(func() { runs[i] = simRunIn(p, opts, http.Handler(h)) })
		}
		wg.Wait()
		drain()
	})
	return runs
}

// Three replicas search one pool together: each step read back summed over
// the fleet, every replica chooses the same levels, and the fleet finds
// the knee a lone loadprobe finds, in as many steps.
func TestFleetSearchFindsTheLoneKnee(t *testing.T) {
	p := fleetSearchProbe(t)
	alone := simRun(t, p, Options{}, demo(target.Options{Workers: 12, WorkTime: 20 * time.Millisecond}))
	lone := alone.BreakingPoints.Knee
	if lone == nil || lone.Bracket[1] != 12 {
		t.Fatalf("alone: knee %+v at levels %v, want its bracket to end at the pool's 12", lone, levels(alone))
	}

	runs := searchFleet(t, p, []bool{true, true, true})
	for i, r := range runs {
		if r.Ended != result.ResultCompleted {
			t.Fatalf("replica %d: run %s (%s), want completed", i, r.Ended, r.Error)
		}
		if fmt.Sprint(levels(r)) != fmt.Sprint(levels(runs[0])) {
			t.Errorf("replica %d ran levels %v, replica 0 %v: the fleet must choose alike", i, levels(r), levels(runs[0]))
		}
		if i > 0 && r.Fleet != nil {
			t.Errorf("replica %d carries the fleet's run: only replica 0 exports it", i)
		}
	}
	f := runs[0].Fleet
	t.Logf("alone: levels %v, knee %v; the fleet: levels %v", levels(alone), lone.Bracket, levels(runs[0]))
	if f == nil || !f.Valid || f.Replicas != 3 || len(f.Steps) != len(runs[0].Steps) {
		t.Fatalf("replica 0's fleet %+v, want a valid run of 3 replicas with its %d steps", f, len(runs[0].Steps))
	}
	k := f.BreakingPoints.Knee
	if k == nil || math.Abs(k.Bracket[1]-lone.Bracket[1]) > 1 || math.Abs(k.Bracket[0]-lone.Bracket[0]) > 1 {
		t.Errorf("the fleet's knee %+v, want within a connection of the lone one's bracket %v; fleet levels %v, lone %v",
			k, lone.Bracket, levels(runs[0]), levels(alone))
	}
	if len(f.Steps) > len(alone.Steps)+2 {
		t.Errorf("the fleet took %d steps, the lone loadprobe %d: want at most 2 more", len(f.Steps), len(alone.Steps))
	}
	for i, s := range f.Steps {
		if s.Level != runs[0].Steps[i].Level || s.Goodput < runs[0].Steps[i].Goodput {
			t.Errorf("fleet step %d: level %g, goodput %.0f/s, below replica 0's own %.0f/s at %g", i+1, s.Level, s.Goodput, runs[0].Steps[i].Goodput, runs[0].Steps[i].Level)
		}
	}
}

// A shard whose figures never reach Prometheus leaves its peers unable to
// choose: each ends the run failed after its first step, naming the shard.
func TestFleetSearchFailsWithoutAShard(t *testing.T) {
	runs := searchFleet(t, fleetSearchProbe(t), []bool{true, true, false})
	for i, r := range runs[:2] {
		if r.Ended != result.ResultFailed || len(r.Steps) != 1 || !strings.Contains(r.Error, "shard 2 of 3 has no step at 1") {
			t.Errorf("replica %d: run %s after levels %v (%q), want failed after its first, naming shard 2", i, r.Ended, levels(r), r.Error)
		}
	}
	if f := runs[0].Fleet; f == nil || f.Valid || fmt.Sprint(f.MissingShards) != "[2]" {
		t.Errorf("replica 0's fleet %+v, want invalid with shard 2 missing", f)
	}
}
