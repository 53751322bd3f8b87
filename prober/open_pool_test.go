package prober

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// msClient answers every attempt in a millisecond and counts the
// connections opened.
type msClient struct{ conns atomic.Int64 }

type msConn struct{}

func (c *msClient) NewConn(*template.Vars) transport.Conn { c.conns.Add(1); return msConn{} }
func (c *msClient) Abort()                                {}
func (c *msClient) Close()                                {}
func (msConn) Close()                                     {}

func (msConn) Do(time.Time) (result.Code, result.Outcome) {
	time.Sleep(time.Millisecond)
	return result.HTTPStatus(200), result.Success
}

// frozenLive holds up every sender about to send between from and until
// after start, to until (its in-flight count goes up first): a generator
// stalled that long (a GC pause, a preempted thread), as the engine sees it.
type frozenLive struct {
	recordingLive
	start       time.Time
	from, until time.Duration
}

func (l *frozenLive) InFlight(delta int) {
	if at := time.Since(l.start); delta > 0 && at >= l.from && at < l.until {
		time.Sleep(l.until - at)
	}
}

// Behind by 300 ms at 1 000 req/s against a target that answers in 1 ms,
// the open loop catches up by opening a connection a millisecond while its
// CPU is idle (the senders it has may be stuck: a preempted thread), and
// with the connections it has while its CPU is busy (more load than it can
// send, where each connection more costs it CPU and sends nothing sooner).
// Either way every request due during the lag is sent, late, none dropped.
func TestOpenLoopOpensNoConnectionsForItsOwnBusyCPU(t *testing.T) {
	const from, until = time.Second, 1300 * time.Millisecond
	for _, tc := range []struct {
		name     string
		busy     bool
		min, max int64 // connections opened
	}{
		{"cpu idle", false, 15, 100},
		{"cpu busy", true, 1, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachSender(t, func(t *testing.T, loopsFrom float64) {
				synctest.Test(t, func(t *testing.T) {
					start := time.Now()
					cpu := func() time.Duration {
						if !tc.busy {
							return 0
						}
						return time.Duration(float64(time.Since(start)) * usableCores())
					}
					p := probeFor(t, "http://127.0.0.1:1/", "rate: [1000]\nstep_duration: 2s")
					client := &msClient{}
					live := &frozenLive{start: start, from: from, until: until}
					opts := Options{Live: live, noAlarm: true, cpu: cpu, loopsFrom: loopsFrom}
					r := run(context.Background(), p, opts, &request{t: muxing{client, time.Second}, req: p.Request}, start)
					if len(r.Steps) != 1 {
						t.Fatalf("%d steps (%s: %s), want 1", len(r.Steps), r.Ended, r.Error)
					}
					s := r.Steps[0]
					if s.Dropped != 0 || s.Attempts != 2000 {
						t.Errorf("%d attempts, %d dropped; want the 2000 scheduled, none dropped", s.Attempts, s.Dropped)
					}
					if n := client.conns.Load(); n < tc.min || n > tc.max {
						t.Errorf("%d connections opened, want %d to %d", n, tc.min, tc.max)
					}
					if s.Latency.Max < 0.29 {
						t.Errorf("max latency %.3fs, want the 300ms lag charged", s.Latency.Max)
					}
				})
			})
		})
	}
}
