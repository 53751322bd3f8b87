package prober

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// busyRecord samples a demo target's busy workers every 10ms, as a
// Prometheus scrape would (more often), until the test ends.
type busyRecord struct {
	mu      sync.Mutex
	at      []time.Time
	busy    []float64
	workers int
}

func recordBusy(t *testing.T, tg *target.Target) *busyRecord {
	rec := &busyRecord{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				busy, size := tg.Workers()
				rec.mu.Lock()
				rec.at, rec.busy, rec.workers = append(rec.at, now), append(rec.busy, float64(busy)), size
				rec.mu.Unlock()
			}
		}
	}()
	return rec
}

// saturation is workers_busy / workers as last sampled at or before t.
func (r *busyRecord) saturation(t time.Time) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.at) - 1; i >= 0; i-- {
		if !r.at[i].After(t) {
			return r.busy[i] / float64(r.workers), true
		}
	}
	return 0, false
}

// A ramp against a pool of 4 whose Prometheus reads its busy workers names
// them the bottleneck at the knee, reads the levels below it unsaturated,
// and sets the capacity against a live traffic of 50/s. It goes past the
// pool's size: 4 connections' goodput once read 7.5% below 8's, and a knee
// at the last level is not reached. Six levels, so that the run handed
// over after the fifth shares the array of its steps with the result that
// the sixth is appended to, unless the engine copies it.
func TestTelemetryNamesThePoolAndTheHeadroom(t *testing.T) {
	t.Parallel()
	tg := target.New(target.Options{Workers: 4, WorkTime: 20 * time.Millisecond})
	srv := httptest.NewServer(tg)
	t.Cleanup(srv.Close)
	url := srv.URL
	busy := recordBusy(t, tg)
	prom := testkit.FakePrometheus(t, map[string][]testkit.Series{
		"workers_busy / workers":             {busy.saturation},
		"sum(rate(live_requests_total[1m]))": {func(time.Time) (float64, bool) { return 50, true }},
	}, nil)
	yml := `allowed_targets: ["127.0.0.1"]
probes:
  - name: p
    request: {url: ` + url + `/work, timeout: 1s}
    load: {concurrency: [1, 2, 4, 8, 16, 24], step_duration: 2s, warmup: 200ms}
    telemetry:
      prometheus: {url: ` + prom.URL + `}
      traffic: sum(rate(live_requests_total[1m]))
      peak_window: 1h
      saturation:
        - {name: workers, query: 'workers_busy / workers'}
`
	cfg, err := config.Parse("t.yml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	var partials []result.Result
	r := mustRun(t, t.Context(), cfg.Plans()[0], Options{OnStep: func(p result.Result) { partials = append(partials, p) }})
	if r.Ended != result.ResultCompleted || len(r.Steps) != 6 {
		t.Fatalf("result %s with levels %v: %s", r.Ended, levels(r), r.Error)
	}
	// The runs handed to OnStep, which the collector reads while the run
	// goes on, stay as they were handed: the saturation read after the
	// run reaches the result alone (the race detector caught the collector
	// reading a step as the engine wrote it).
	for _, p := range partials {
		if sat := saturations(p); slices.ContainsFunc(sat, func(m map[string]float64) bool { return m != nil }) {
			t.Errorf("the run handed over at %d steps changed after it: saturation %v", len(p.Steps), sat)
		}
	}
	for _, s := range r.Steps[:2] {
		if v, ok := s.Saturation["workers"]; !ok || v > 0.6 {
			t.Errorf("level %g read workers %v (read: %v), want at most 0.6 below the pool's size", s.Level, v, ok)
		}
	}
	if b := r.Bottleneck; b == nil || b.Resource != "workers" || b.Level != 4 || b.Value != 1 {
		t.Errorf("bottleneck %+v, want workers at 4 reading 1; steps' saturation %v", b, saturations(r))
	}
	h := r.Headroom
	if h == nil || h.LivePeak != 50 || h.LiveNow != 50 || !within(h.Ratio, r.Capacity.Throughput/50, 1e-9) || !within(h.Ratio, 4, 0.1) {
		t.Errorf("headroom %+v, want capacity (about 200/s) over a live peak of 50", h)
	}
	all := strings.Join(r.Diagnosis, "\n")
	for _, want := range []string{"bottleneck: workers at its limit from 4 connections", "headroom 4"} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnosis lacks %q:\n%s", want, all)
		}
	}
}

func saturations(r result.Result) []map[string]float64 {
	var out []map[string]float64
	for _, s := range r.Steps {
		out = append(out, s.Saturation)
	}
	return out
}
