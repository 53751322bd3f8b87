package prober

import (
	"math"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// silentTarget never answers: it notes when each request arrived and
// holds it until its client leaves.
type silentTarget struct {
	mu       sync.Mutex
	arrivals []time.Time
}

func (s *silentTarget) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.arrivals = append(s.arrivals, time.Now())
	s.mu.Unlock()
	<-r.Context().Done()
}

func (s *silentTarget) seen() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

// TestOpenLoopSendsNothingPastItsBound is issue 24's never-answering target:
// at 20 000 req/s for one 4s step, each of max_in_flight (1 000) senders
// sends one request and waits out its 5s timeout. Before, the requests that
// fell due while the pool grew were sent as senders came free, however
// late: 22 739 of them after the step, in a run of two minutes. A request
// leaves within its timeout of its time and before the step's end (give or
// take endGrace), or is dropped and counted; the run ends its timeout after
// the step.
func TestOpenLoopSendsNothingPastItsBound(t *testing.T) {
	t.Parallel()
	eachSender(t, func(t *testing.T, loopsFrom float64) {
		target := &silentTarget{}
		p := probeFor(t, "http://127.0.0.1:1/", `rate: [20000]
step_duration: 4s`)
		p.Request.Timeout = p.Request.Timeout * 5
		timeout, step := time.Duration(p.Request.Timeout), time.Duration(p.Load.StepDuration)
		live := &recordingLive{}
		var r result.Result
		var took time.Duration
		synctest.Test(t, func(*testing.T) {
			began := time.Now()
			r = simRunIn(p, Options{Live: live, loopsFrom: loopsFrom}, target)
			took = time.Since(began)
			drain()
		})
		if r.Ended != result.ResultCompleted || len(r.Steps) != 1 {
			t.Fatalf("run %s (%s), %d steps", r.Ended, r.Error, len(r.Steps))
		}
		s := r.Steps[0]
		stepEnd := s.Started.Add(step)
		arrivals := target.seen()
		var late int
		var last time.Time
		for _, at := range arrivals {
			if at.After(stepEnd.Add(endGrace)) {
				late++
			}
			last = latest(last, at)
		}
		if late > 0 || last.After(stepEnd.Add(timeout)) {
			t.Errorf("%d of %d requests reached the target more than %s after the step's end; the last %s after it (bound: none past the timeout of %s)",
				late, len(arrivals), endGrace, last.Sub(stepEnd), timeout)
		}
		t.Logf("run %s; %d requests sent, %d dropped; the target saw %d, the last %s after the step's end",
			took.Round(time.Millisecond), s.Attempts, s.Dropped, len(arrivals), last.Sub(stepEnd).Round(time.Millisecond))
		// The target saw what the run says it sent, and nothing the run says it dropped.
		if int64(len(arrivals)) != s.Attempts {
			t.Errorf("the target saw %d requests, the run counts %d attempts", len(arrivals), s.Attempts)
		}
		if s.Attempts > int64(p.Load.MaxInFlight) || s.Errors[result.Timeout.String()] != s.Attempts {
			t.Errorf("%d attempts, %d of them timeouts; want at most max_in_flight (%d), all timed out", s.Attempts, s.Errors[result.Timeout.String()], p.Load.MaxInFlight)
		}
		if scheduled := int64(20000 * step.Seconds()); s.Attempts+s.Dropped != scheduled || int64(live.dropped) != s.Dropped {
			t.Errorf("%d attempts + %d dropped (%d live), want the %d scheduled, every one sent or counted", s.Attempts, s.Dropped, live.dropped, scheduled)
		}
		// The run: its step, then the timeout of the last requests sent.
		if bound := step + timeout + endGrace; took > bound {
			t.Errorf("the run took %s, want at most the step, the timeout and the end's grace (%s)", took.Round(time.Millisecond), bound)
		}
		if d := r.DurationSeconds; d > took.Seconds() {
			t.Errorf("duration_seconds %.1f beyond the %s the run took", d, took)
		}
	})
}

// index is offset's inverse: the first request due at or after a time, on
// flat and ramping stages, at the stage's edges included.
func TestStageIndexIsOffsetsInverse(t *testing.T) {
	stages := []stage{
		{level: 20000, rampTo: 20000, duration: 4 * time.Second},
		{level: 3, rampTo: 3, duration: time.Second},
		{level: 50, rampTo: 150, duration: time.Second},
		{level: 15, rampTo: 0, duration: time.Second},
		{level: 0, rampTo: 200, duration: time.Second},
	}
	for _, st := range stages {
		for _, d := range []time.Duration{1, 999 * time.Microsecond, 250 * time.Millisecond, st.duration / 3, st.duration - 1, st.duration} {
			n := st.index(d)
			if n < int64(math.Ceil(st.total())) && st.offset(int(n)) < d || n > 0 && st.offset(int(n-1)) >= d {
				t.Errorf("%+v: index(%s) = %d, due at %s (the one before at %s)", st, d, n, st.offset(int(n)), st.offset(int(max(n-1, 0))))
			}
		}
	}
	if n := (stage{level: 15, rampTo: 0, duration: time.Second}).requests(); n != 8 {
		t.Errorf("15→0 req/s over 1s schedules %d requests, want 8", n)
	}
	if n := (stage{level: 20000, rampTo: 20000, duration: 4 * time.Second}).requests(); n != 80000 {
		t.Errorf("20000 req/s over 4s schedules %d requests, want 80000", n)
	}
}

// At high rates a sender wakes on the first tick at or after its request's
// time, never before it, and at the time itself when that tick would fall
// past the stage's end.
func TestWakeForRoundsUpToTheTick(t *testing.T) {
	start := time.Now()
	o := &openStage{start: start, st: stage{level: 20000, rampTo: 20000, duration: time.Second}}
	at := func(d time.Duration) time.Time { return start.Add(d) }
	if got := o.wakeFor(at(30 * time.Microsecond)); !got.Equal(at(30 * time.Microsecond)) {
		t.Errorf("without ticks: woke %s after the start, want at the request's time", got.Sub(start))
	}
	o.tick.Store(int64(batchTick))
	for _, tc := range []struct{ due, want time.Duration }{
		{0, 0},
		{1, batchTick},
		{batchTick, batchTick},
		{batchTick + 50*time.Microsecond, 2 * batchTick},
		{time.Second - 10*time.Microsecond, time.Second - 10*time.Microsecond}, // the next tick is the stage's end
	} {
		if got := o.wakeFor(at(tc.due)).Sub(start); got != tc.want {
			t.Errorf("due %s: woke at %s, want %s", tc.due, got, tc.want)
		}
	}
}
