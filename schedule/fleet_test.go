package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Replica 0 judges each finished run of a scheduled probe as its fleet's
// once the run is kept, without holding up the next run, and the fleet's
// figures join that run's result; a continuous probe's runs are not judged.
func TestFleetJudgeJoinsTheRunsResult(t *testing.T) {
	var mu sync.Mutex
	judged := map[string]int{}
	judge := func(ctx context.Context, p *plan.Probe, r result.Result) *result.Fleet {
		mu.Lock()
		judged[p.Name]++
		mu.Unlock()
		time.Sleep(3 * time.Second) // waiting for the last scrape
		return &result.Fleet{Shards: 3, Replicas: 3, Valid: true, Steps: r.Steps}
	}
	bubble(t, Options{FleetJudge: judge}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 100], step_duration: 1s}
    schedule: {interval: 1m}
  # Small beside a (1 connection against 100): they run together.
  - name: c
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1], step_duration: 1s}
    schedule: {continuous: true}
`))
		after(2*time.Second + time.Millisecond) // a's run ended; its judge waits
		if st := probeState(t, s, "a"); st.Last == nil || st.Last.Fleet != nil {
			t.Fatalf("a's run right after it ended: %+v, want kept, not judged yet", st.Last)
		}
		after(3 * time.Second)
		st := probeState(t, s, "a")
		if st.Last == nil || st.Last.Fleet == nil || !st.Last.Fleet.Valid || len(st.Last.Fleet.Steps) != 2 {
			t.Fatalf("a's last run after its judge: %+v, want its fleet's figures", st.Last)
		}
		mu.Lock()
		defer mu.Unlock()
		if judged["a"] != 1 || judged["c"] != 0 {
			t.Errorf("judged %v, want a's one run and none of the continuous c", judged)
		}
	})
}
