package prober

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/result"
)

// lingering is a target that serves 8 requests at once in 20ms and sheds
// the rest with 503, and stays slow (200ms a request) for after once it
// last shed: a cache to warm again, a queue to work off.
func lingering(after time.Duration) http.Handler {
	var (
		mu       sync.Mutex
		inFlight int
		shedAt   time.Time
	)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		now := time.Now()
		if inFlight >= 8 {
			shedAt = now
			mu.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		inFlight++
		slow := !shedAt.IsZero() && now.Sub(shedAt) < after
		mu.Unlock()
		if slow {
			time.Sleep(200 * time.Millisecond)
		} else {
			time.Sleep(20 * time.Millisecond)
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	})
}

// After a ramp past its capacity the first level's load runs again until
// three 1s windows in a row are clean: a target slow for 3s after its
// overload recovers 3s (to within a second) after the last level's end.
func TestRecoveryOfATargetSlowAfterItsOverload(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/lingering", `concurrency: [1, 2, 4, 16]
step_duration: 2s
settle_timeout: 10s`)
	p.Abort.ErrorRatio = 1 // run the overloaded level through
	r := simRun(t, p, Options{}, func() http.Handler { return lingering(3 * time.Second) })
	o := r.Overload
	if r.Ended != result.ResultCompleted || o == nil || o.RecoverySeconds == nil {
		t.Fatalf("result %s, overload %+v: want a completed run with a recovery; %s", r.Ended, o, diagnosis(r))
	}
	t.Logf("recovered after %.2fs", *o.RecoverySeconds)
	if got := *o.RecoverySeconds; got < 2 || got > 4 {
		t.Errorf("recovery_seconds %.2f, want 3 ± 1", got)
	}
	if d := diagnosis(r); !strings.Contains(d, "s after the end of its last level: the first of 3 windows of 1s in a row at 1 connection without a failure") {
		t.Errorf("the diagnosis does not say the recovery:\n%s", d)
	}
	if len(r.Steps) != 4 {
		t.Errorf("%d steps, want the 4 levels: recovery windows are no steps", len(r.Steps))
	}

	// Slow for longer than settle_timeout: not recovered within it.
	never := simRun(t, p, Options{}, func() http.Handler { return lingering(time.Hour) })
	if o := never.Overload; o == nil || o.RecoverySeconds != nil || !strings.Contains(diagnosis(never), "did not recover within 10s of the end of its last level") {
		t.Errorf("a target slow for an hour: overload %+v; %s", o, diagnosis(never))
	}

	// A ramp that stops at its capacity measures no recovery.
	within := probeFor(t, "http://127.0.0.1:1/work", `concurrency: [1, 2, 4]
step_duration: 1s`)
	w := simRun(t, within, Options{}, demo(target.Options{Workers: 4, WorkTime: 20 * time.Millisecond}))
	if w.Overload != nil || strings.Contains(diagnosis(w), "recover") {
		t.Errorf("a ramp ending at its capacity: overload %+v; %s", w.Overload, diagnosis(w))
	}
}
