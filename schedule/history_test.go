package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// capacityRun is fakeRun with a capacity and a knee that grow by one with
// each run of a probe, so that a history shows which runs it kept, in
// which order.
func capacityRun() prober.Runner {
	var mu sync.Mutex
	runs := map[string]int{}
	return func(ctx context.Context, p *plan.Probe, opts prober.Options) (result.Result, error) {
		r, err := fakeRun(ctx, p, opts)
		mu.Lock()
		runs[p.Name]++
		n := float64(runs[p.Name])
		mu.Unlock()
		r.Capacity = &result.Point{Level: 2, Throughput: n}
		r.BreakingPoints.Knee = &result.Point{Level: n, Throughput: n}
		r.Valid = true
		return r, err
	}
}

const hourly = `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
    schedule: {interval: 1h}
`

const withCanary = hourly + `  - name: canary
    request: {url: "http://127.0.0.2/noop"}
    load: {rate: [10], step_duration: 1m}
    schedule: {continuous: true}
`

// With a store, every finished run of a scheduled probe joins its history,
// oldest first, at most historyRuns of them, and a restarted daemon starts
// from it; a continuous probe keeps none, and without a store no probe
// does.
func TestSchedulerKeepsAHistoryOfRuns(t *testing.T) {
	store, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	capacities := func(h []state.Run) []float64 {
		var c []float64
		for _, r := range h {
			c = append(c, r.Capacity.Throughput)
			if r.Knee == nil || r.Knee.Level != r.Capacity.Throughput || r.Ended != result.ResultCompleted || !r.Valid {
				t.Errorf("history run %+v: want the run's knee, result and validity", r)
			}
		}
		return c
	}
	bubble(t, Options{Store: store, Run: capacityRun()}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, withCanary))
		after(2*time.Hour + time.Minute) // the runs at 0, 1h and 2h
		if got := capacities(probeState(t, s, "a").History); len(got) != 3 || got[0] != 1 || got[2] != 3 {
			t.Errorf("history %v, want the three runs, oldest first", got)
		}
		if h := probeState(t, s, "canary").History; h != nil {
			t.Errorf("the canary kept a history of %d runs", len(h))
		}
	})
	states, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if st.Probe.Name == "a" && len(st.History) != 3 {
			t.Errorf("the store kept %d runs of a, want 3", len(st.History))
		}
	}
	bubble(t, Options{Store: store, Run: capacityRun()}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, hourly))
		after(historyRuns*time.Hour + time.Minute)
		got := capacities(probeState(t, s, "a").History)
		// 3 stored, then historyRuns+1 more (numbered 1 to 49 again):
		// the last historyRuns.
		if len(got) != historyRuns || got[0] != 2 || got[len(got)-1] != historyRuns+1 {
			t.Errorf("history of %d runs, %v … %v; want the last %d", len(got), got[0], got[len(got)-1], historyRuns)
		}
	})

	// Without a store the history lasts as long as the process: its
	// capacity changes are read from it all the same.
	bubble(t, Options{Run: capacityRun()}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, hourly))
		after(2*time.Hour + time.Minute)
		if st := probeState(t, s, "a"); len(st.History) != 3 || st.Last == nil {
			t.Errorf("without a store: history %v, last %v; want the three runs, and the last run", st.History, st.Last)
		}
	})
}

// After each run the scheduler looks for a change in the capacities of the
// probe's history: a capacity halved three runs ago reads as a change of
// 0.5, three runs ago; before it, there is none.
func TestCapacityChangeFollowsTheHistory(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	halves := func(ctx context.Context, p *plan.Probe, opts prober.Options) (result.Result, error) {
		r, err := fakeRun(ctx, p, opts)
		mu.Lock()
		runs++
		capacity := 1000.0 + float64(runs%3) // a little noise
		if runs > 10 {
			capacity /= 2
		}
		mu.Unlock()
		r.Capacity, r.Valid = &result.Point{Level: 2, Throughput: capacity}, true
		return r, err
	}
	bubble(t, Options{Run: halves}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, hourly))
		after(9*time.Hour + time.Minute) // runs 1 to 10
		if c := probeState(t, s, "a").Change; c != nil {
			t.Errorf("a steady capacity reads a change %+v", c)
		}
		after(3 * time.Hour) // runs 11 to 13, at half
		c := probeState(t, s, "a").Change
		if c == nil || c.RunsAgo != 3 || c.Ratio() < 0.49 || c.Ratio() > 0.51 {
			t.Errorf("change %+v, want the halving, 3 runs ago", c)
		}
	})
}
