package prober

import (
	"testing"
	"time"
)

// A timerfd re-arms its interval only when read: the alarm must go off at
// every interval, not once.
func TestAlarmGoesOffAtEveryInterval(t *testing.T) {
	a := newAlarm()
	if a == nil {
		t.Fatal("no timerfd on Linux")
	}
	defer a.close()
	a.every(time.Now(), time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for a.expiries.Load() < 10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := a.expiries.Load(); n < 10 {
		t.Errorf("the alarm went off %d times in 5s at a 1ms interval", n)
	}
}

// An event loop's ticks armed after the first was due keep to its
// schedule's grid: armed 1.5 periods late, the loop wakes at once for the
// ticks missed, then on the grid, half a period later, not a period later.
// Off the grid, a loop that woke half a period after each tick would open
// no connection for a stage's requests (open_loop.go).
func TestTicksKeepToTheirGridWhenArmedLate(t *testing.T) {
	const period = 40 * time.Millisecond
	tick := newTicker(true)
	if tick == nil {
		t.Fatal("no timerfd on Linux")
	}
	defer tick.close()
	first := time.Now().Add(-3 * period / 2)
	tick.every(first, period)
	tick.tick(false) // the ticks missed
	for range 2 {
		tick.tick(false)
		woke := time.Since(first)
		if off := woke - woke/period*period; off > period/4 {
			t.Fatalf("woke %v after a tick of the grid, want on it (a period is %v)", off, period)
		}
	}
}
