package schedule

import (
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/result"
)

const pausedProbes = `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
    schedule: {interval: 1m}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1], step_duration: 10s}
    schedule: {interval: 1m}
`

// both counts the events of a kind (and result) of probes a and b.
func both(evs []obsEvent, kind string, res result.RunResult) int {
	return count(evs, kind, "a", res) + count(evs, kind, "b", res)
}

// Pause ends every run under way at once, aborted by pause; no run starts
// while paused, not even one that falls due; resume starts the runs held
// and the ones pause cut short at once.
func TestPauseHoldsEveryRunUntilResumed(t *testing.T) {
	bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, pausedProbes))
		after(1500 * time.Millisecond) // a in its second level, b in its only one
		s.Pause()
		after(stopTime + time.Millisecond)
		evs := obs.snapshot()
		if n := both(evs, "ended", result.ResultAborted); n != 2 || !s.Paused() {
			t.Fatalf("%d runs aborted right after the pause, want both:\n%s", n, formatEvents(evs))
		}
		for _, name := range []string{"a", "b"} {
			if l := probeState(t, s, name).Last; l == nil || l.Abort == nil || l.Abort.By != result.ByPause {
				t.Errorf("%s's last run %+v, want aborted by pause", name, l)
			}
		}
		after(3 * time.Minute) // three intervals fall due
		if n := both(obs.snapshot(), "started", ""); n != 2 {
			t.Fatalf("%d runs started while paused, want the 2 before the pause", n)
		}
		s.Resume()
		after(time.Millisecond)
		if n := both(obs.snapshot(), "started", ""); n != 4 || s.Paused() {
			t.Errorf("%d runs started once resumed, want both again at once", n)
		}
		after(11 * time.Second)
		if n := both(obs.snapshot(), "ended", result.ResultCompleted); n != 2 {
			t.Errorf("%d runs completed after the resume, want 2:\n%s", n, formatEvents(obs.snapshot()))
		}
	})
}

// With a store the switch outlives the scheduler: a new one starts paused.
func TestPauseKeptInTheStore(t *testing.T) {
	dir := t.TempDir()
	store, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	bubble(t, Options{Store: store}, func(t *testing.T, s *Scheduler, obs *recObserver) { s.Pause() })
	bubble(t, Options{Store: store}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, pausedProbes))
		after(time.Minute)
		if n := both(obs.snapshot(), "started", ""); !s.Paused() || n != 0 {
			t.Fatalf("restarted on a paused store: paused %v, %d runs started", s.Paused(), n)
		}
		s.Resume()
	})
	bubble(t, Options{Store: store}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		if s.Paused() {
			t.Error("resumed, then restarted: still paused")
		}
	})
}
