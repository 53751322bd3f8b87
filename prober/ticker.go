package prober

import (
	"runtime"
	"time"
)

// ticker wakes an event loop on its schedule's ticks.
type ticker interface {
	// every makes it tick at first, then every period.
	every(first time.Time, period time.Duration)
	// tick waits for the next tick, lending its core to the rest of the
	// process when lend is true; false once it is closed.
	tick(lend bool) bool
	close()
}

// ticker is a timerfd (ticker_linux.go), or the Go runtime's timers
// without one, as on the bubble's clock of the tests (Options.noAlarm).
func (e *engine) ticker() ticker {
	if !e.opts.noAlarm {
		if t := newTicker(runtime.GOMAXPROCS(0) > 1); t != nil {
			return t
		}
	}
	return &timerTicks{}
}

// timerTicks ticks on the Go runtime's timers: on time to within its
// poller's millisecond when the generator idles (alarm_linux.go).
type timerTicks struct {
	first  time.Time
	period time.Duration
}

func (t *timerTicks) every(first time.Time, period time.Duration) { t.first, t.period = first, period }

func (t *timerTicks) tick(bool) bool {
	next := t.first
	if since := time.Since(t.first); since >= 0 {
		next = t.first.Add((since/t.period + 1) * t.period)
	}
	time.Sleep(time.Until(next))
	return true
}

func (t *timerTicks) close() {}
