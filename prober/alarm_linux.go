package prober

import (
	"encoding/binary"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// alarm wakes the Go scheduler at a given time to within microseconds.
//
// When the generator has nothing to run, the Go runtime sleeps in
// epoll_wait until its next timer, and epoll_wait takes a timeout in whole
// milliseconds: a sender whose request is due in 200µs wakes up to a
// millisecond late, and that lateness is charged to the target (latency
// runs from the intended send time). The alarm is a timerfd registered with
// the runtime's poller: when it expires, epoll_wait returns, the scheduler
// runs the timers that are due, and the sender's own timer fires on time.
// A goroutine reads every expiry: a timerfd re-arms its interval only when
// read, so an unread one goes off once (its first expiry is the only event
// the edge-triggered poller sees). It ticks at the schedule's interval (or
// on its batch ticks at high rates), so the senders make no system call for
// it; the open loop's watch sets it again at each of its looks, every
// millisecond or every interval of the schedule when that is longer
// (open.go). On this machine a 500µs sleep of a
// GOMAXPROCS=1 program woke 580µs late at the median without the alarm and
// 38µs late with it (bench/BENCH.md).
type alarm struct {
	f        *os.File // keeps the descriptor registered with the poller
	fd       int
	expiries atomic.Uint64 // read so far
}

// newAlarm returns nil when the system offers no timerfd: then sleeps have
// the runtime's own precision.
func newAlarm() *alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	a := &alarm{f: os.NewFile(uintptr(fd), "alarm"), fd: fd}
	go a.drain()
	return a
}

// drain reads the expiries until the alarm is closed.
func (a *alarm) drain() {
	var n [8]byte
	for {
		if _, err := a.f.Read(n[:]); err != nil {
			return
		}
		a.expiries.Add(binary.NativeEndian.Uint64(n[:]))
	}
}

// alarmSlack is added to every alarm so that it never goes off before the
// Go timer it stands for is due (which would leave the runtime to sleep a
// whole millisecond again).
const alarmSlack = 2 * time.Microsecond

// every makes the alarm go off at first and then every period.
func (a *alarm) every(first time.Time, period time.Duration) {
	if a != nil {
		setTimer(a.fd, first, period)
	}
}

// setTimer makes the timerfd fd go off at first and every period after
// it, on first's grid even when first has passed: an event loop armed
// after its first tick was due keeps to its schedule's ticks, which its
// rules count from (open_loop.go), where a timer started from now would
// tick up to a period off them for the whole stage.
func setTimer(fd int, first time.Time, period time.Duration) {
	var now unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	at := now.Nano() + int64(time.Until(first)+alarmSlack)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(at), Interval: unix.NsecToTimespec(int64(period))}
	unix.TimerfdSettime(fd, unix.TFD_TIMER_ABSTIME, &spec, nil)
}

func (a *alarm) close() {
	if a != nil {
		a.f.Close()
	}
}
