package prober

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// pacedClient answers every attempt after latency(now), or times out at
// the attempt's deadline when that comes first. It runs on synctest's
// clock: every step start can be compared exactly.
type pacedClient struct {
	latency func(now time.Time) time.Duration
}

type pacedConn struct{ c *pacedClient }

func (c *pacedClient) NewConn(*template.Vars) transport.Conn { return pacedConn{c} }
func (c *pacedClient) Abort()                                {}
func (c *pacedClient) Close()                                {}
func (pacedConn) Close()                                     {}

func (c pacedConn) Do(deadline time.Time) (result.Code, result.Outcome) {
	now := time.Now()
	if done := now.Add(c.c.latency(now)); done.After(deadline) {
		time.Sleep(deadline.Sub(now))
		return result.Code{}, result.Timeout
	}
	time.Sleep(c.c.latency(now))
	return result.HTTPStatus(200), result.Success
}

func stepStarts(r result.Result) []time.Time {
	var ts []time.Time
	for _, s := range r.Steps {
		ts = append(ts, s.Started)
	}
	return ts
}

// Every step of an aligned run starts at the run's boundary plus the steps
// before it, each with its settle allowance (half of a 2s step): a replica
// that settled at once waits for the start, and one whose target is still
// slow at the start stops settling there, as the rest of its fleet starts
// the step then. Closed and open loop, sharded and not, alike.
func TestAlignedStepsStartAtTheirOffsets(t *testing.T) {
	fast := func(time.Time) time.Duration { return 10 * time.Millisecond }
	for _, tc := range []struct {
		name, load string
		shard      fleet.Shard
		// backlog makes the target slow from the end of the first step
		// until after the second step's start: settling never succeeds.
		backlog bool
	}{
		{name: "concurrency", load: "concurrency: [1, 2, 4]\nstep_duration: 2s"},
		{name: "rate", load: "rate: [10, 20, 40]\nstep_duration: 2s"},
		{name: "sharded with an idle share", load: "concurrency: [1, 2, 4]\nstep_duration: 2s", shard: fleet.Shard{Index: 2, Count: 3}},
		{name: "settle cut at the start", load: "concurrency: [1, 2, 4]\nstep_duration: 2s", backlog: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := probeFor(t, "http://127.0.0.1:1/", tc.load)
				at := time.Now().Add(1500 * time.Millisecond) // the next boundary
				client := &pacedClient{latency: fast}
				if tc.backlog {
					slowFrom, slowUntil := at.Add(2*time.Second), at.Add(4*time.Second)
					client.latency = func(now time.Time) time.Duration {
						if !now.Before(slowFrom) && now.Before(slowUntil) {
							return 2 * time.Second // beyond the 1s timeout
						}
						return 10 * time.Millisecond
					}
				}
				r := run(context.Background(), p, Options{Align: at, Shard: tc.shard, noAlarm: true}, &request{t: client, req: p.Request}, time.Now())
				if r.Ended != result.ResultCompleted {
					t.Fatalf("result %s (%s), want completed", r.Ended, r.Error)
				}
				want := []time.Time{at, at.Add(3 * time.Second), at.Add(6 * time.Second)}
				got := stepStarts(r)
				for i := range want {
					if i >= len(got) || !got[i].Equal(want[i]) {
						t.Fatalf("step starts %v after the boundary, want 0s, 3s, 6s", offsets(got, at))
					}
				}
				if tc.backlog {
					// It settled from the end of the first step (2s,
					// plus the last attempt under way) to the start.
					if s := r.Steps[1].SettleSeconds; s < 0.95 || s > 1 {
						t.Errorf("settled %.3fs before the second step, want the allowance (1s) less the first step's last attempt", s)
					}
				}
			})
		})
	}
}

func offsets(ts []time.Time, from time.Time) []time.Duration {
	var ds []time.Duration
	for _, t := range ts {
		ds = append(ds, t.Sub(from))
	}
	return ds
}

// Without a boundary a step starts as soon as the last one has settled:
// a lone loadprobe wastes no allowance.
func TestUnalignedStepsFollowOneAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := probeFor(t, "http://127.0.0.1:1/", "concurrency: [1, 2]\nstep_duration: 2s")
		start := time.Now()
		r := run(context.Background(), p, Options{}, &request{t: &pacedClient{latency: func(time.Time) time.Duration { return 10 * time.Millisecond }}, req: p.Request}, start)
		got := offsets(stepStarts(r), start)
		// The second starts after the first (2s, its last attempt ending
		// on the dot) and one settling request (10ms).
		if len(got) != 2 || got[0] != 0 || got[1] != 2010*time.Millisecond {
			t.Errorf("step starts %v after the run's, want 0s and 2.01s", got)
		}
	})
}
