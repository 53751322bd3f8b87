package prober

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// The plan of a shard sends its share of every kind of load and reports the
// fleet's level on each step.
func TestPlanSendsTheShardsShareAndReportsTheFleetLevel(t *testing.T) {
	url := "http://127.0.0.1:1/"
	tests := []struct {
		load  string
		shard fleet.Shard
		want  []stage // level, rampTo, fleetLevel
	}{
		{"concurrency: [1, 10, 12]", fleet.Shard{Index: 1, Count: 3}, []stage{{level: 0, rampTo: 0, fleetLevel: 1}, {level: 3, rampTo: 3, fleetLevel: 10}, {level: 4, rampTo: 4, fleetLevel: 12}}},
		{"concurrency: [1, 10, 12]", fleet.Shard{Index: 0, Count: 3}, []stage{{level: 1, rampTo: 1, fleetLevel: 1}, {level: 4, rampTo: 4, fleetLevel: 10}, {level: 4, rampTo: 4, fleetLevel: 12}}},
		{"concurrency: [5]", fleet.Shard{}, []stage{{level: 5, rampTo: 5, fleetLevel: 5}}},
		{"rate: [30, 300]", fleet.Shard{Index: 2, Count: 3}, []stage{{level: 10, rampTo: 10, fleetLevel: 30}, {level: 100, rampTo: 100, fleetLevel: 300}}},
		{`phases:
  - {name: up, duration: 1s, rate: 30, ramp_to: 90}
  - {name: flat, duration: 1s, rate: 90}`, fleet.Shard{Index: 0, Count: 3}, []stage{{level: 10, rampTo: 30, fleetLevel: 60}, {level: 30, rampTo: 30, fleetLevel: 90}}},
	}
	for _, tt := range tests {
		got := stagesOf(probeFor(t, url, tt.load).Load, tt.shard)
		if len(got) != len(tt.want) {
			t.Fatalf("%s as %v: %d stages, want %d", tt.load, tt.shard, len(got), len(tt.want))
		}
		for i, w := range tt.want {
			g := got[i]
			if !within(g.level, w.level, 1e-9) || !within(g.rampTo, w.rampTo, 1e-9) || g.fleetLevel != w.fleetLevel {
				t.Errorf("%s as %v, stage %d: level %g ramp_to %g fleet level %g; want %g, %g, %g",
					tt.load, tt.shard, i, g.level, g.rampTo, g.fleetLevel, w.level, w.rampTo, w.fleetLevel)
			}
		}
	}
}

// concurrencyLive records the most connections the closed loop asked for.
type concurrencyLive struct {
	live.Nop
	most atomic.Int64
}

func (l *concurrencyLive) Concurrency(n int) {
	if int64(n) > l.most.Load() {
		l.most.Store(int64(n))
	}
}

// Replica 1 of 3 at the fleet's level 12 holds 4 connections against a
// /work pool of 12: the server sees at most 4 requests at once, Little's
// law reads 4 in flight, and the step still reports level 12.
func TestShardHoldsItsShareOfTheLevel(t *testing.T) {
	work := target.New(target.Options{Workers: 12, WorkTime: 10 * time.Millisecond})
	var inFlight, most atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		work.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p := probeFor(t, srv.URL+"/work", `concurrency: [12]
step_duration: 1s
warmup: 100ms`)
	live := &concurrencyLive{}

	r := mustRun(t, context.Background(), p, Options{Live: live, Shard: fleet.Shard{Index: 1, Count: 3}})

	if r.Ended != result.ResultCompleted || len(r.Steps) != 1 {
		t.Fatalf("result %s with levels %v, want completed with 1 level; error %q", r.Ended, levels(r), r.Error)
	}
	s := r.Steps[0]
	if s.Level != 12 {
		t.Errorf("the step reports level %g, want the fleet's 12", s.Level)
	}
	if got := live.most.Load(); got != 4 {
		t.Errorf("loadprobe_concurrency reached %d, want the share 4", got)
	}
	if got := most.Load(); got != 4 {
		t.Errorf("the target saw up to %d requests at once, want the share 4", got)
	}
	if !within(s.InFlight, 4, 0.15) {
		t.Errorf("Little's law: %.2f in flight, want about 4", s.InFlight)
	}
	// Held against its share, not against the fleet's level.
	if !within(s.LoadHeldRatio, 1, 0.15) {
		t.Errorf("load held ratio %.2f, want about 1 (4 of its 4 connections)", s.LoadHeldRatio)
	}
}

// A replica whose share of a level is no connection holds the step idle for
// its duration, so it steps with the fleet, and reports it with no
// attempts; it settles only once it has sent load of its own.
func TestShardIdlesThroughALevelBelowTheReplicaCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := probeFor(t, "http://127.0.0.1:1/", `concurrency: [1, 2]
step_duration: 3s`)
		start := time.Now()

		r := mustRun(t, context.Background(), p, Options{Shard: fleet.Shard{Index: 2, Count: 3}})

		if got := time.Since(start); got != 6*time.Second {
			t.Errorf("two idle steps of 3s took %s, want 6s", got)
		}
		if r.Ended != result.ResultCompleted || !slices.Equal(levels(r), []float64{1, 2}) {
			t.Fatalf("result %s with levels %v, want completed with levels 1 and 2", r.Ended, levels(r))
		}
		for _, s := range r.Steps {
			if s.Attempts != 0 || s.SettleSeconds != 0 || s.LoadHeldRatio != 1 || s.ErrorRatio != 0 {
				t.Errorf("idle step at level %g: %d attempts, settled %gs, held %g, error ratio %g; want 0, 0, 1, 0",
					s.Level, s.Attempts, s.SettleSeconds, s.LoadHeldRatio, s.ErrorRatio)
			}
		}
	})
}
