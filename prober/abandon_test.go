package prober

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// stuckClient answers every attempt in 10ms until hangAt, then holds every
// later attempt until release is closed, deaf to its deadline and to Abort:
// the worst a client bug could do.
type stuckClient struct {
	start   time.Time
	hangAt  time.Duration
	release chan struct{}
}

type stuckConn struct{ c *stuckClient }

func (c *stuckClient) NewConn(*template.Vars) transport.Conn { return stuckConn{c} }
func (c *stuckClient) Abort()                                {}
func (c *stuckClient) Close()                                {}

func (c stuckConn) Do(time.Time) (result.Code, result.Outcome) {
	if time.Since(c.c.start) < c.c.hangAt {
		time.Sleep(10 * time.Millisecond)
		return result.HTTPStatus(200), result.Success
	}
	<-c.c.release
	return result.Code{}, result.Other
}

func (stuckConn) Close() {}

// A canceled run returns abandonAfter after its cancel even when an attempt
// under way never ends: canceled, with the steps that ran their full length.
func TestRunAbandonsAttemptsThatIgnoreTheCancel(t *testing.T) {
	for _, load := range []string{"concurrency: [1, 2]\nstep_duration: 10s", "rate: [10, 20]\nstep_duration: 10s"} {
		t.Run(load[:4], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := probeFor(t, "http://127.0.0.1:1/", load)
				client := &stuckClient{start: time.Now(), hangAt: 12 * time.Second, release: make(chan struct{})}
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(15*time.Second, cancel)
				start := time.Now()
				r := run(ctx, p, Options{noAlarm: true}, &request{t: client, req: p.Request}, start)
				if took := time.Since(start); took != 15*time.Second+abandonAfter {
					t.Errorf("Run returned %s after its start, want the cancel at 15s + %s", took, abandonAfter)
				}
				if r.Ended != result.ResultCanceled || len(r.Steps) != 1 || r.Steps[0].Attempts == 0 {
					t.Errorf("result %s with %d steps, want canceled with the first, whole step", r.Ended, len(r.Steps))
				}
				close(client.release) // the abandoned attempts end; nothing else is left
				synctest.Wait()
			})
		})
	}
}
