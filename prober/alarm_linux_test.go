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
