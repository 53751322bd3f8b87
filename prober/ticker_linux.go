package prober

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// timerfdTicks are an event loop's ticks (open_loop.go): a timerfd that
// the loop waits on in a blocking read, outside the runtime's poller.
// Parked in the poller instead, the loop cost 14% more CPU at 20 000
// requests a second: two reads a tick (the first finds nothing) and three
// of the poller's epoll_pwait. With a P to spare (GOMAXPROCS of 2 or more)
// the loop keeps its P while it waits, in a raw system call: the other
// goroutines run on the other Ps, and the runtime preempts the loop every
// 10 ms for those queued on its own. A read the runtime knows of has its
// P taken by sysmon every tick and handed to a thread woken for it: 4
// context switches and 4 futex calls a tick, a third more CPU at 20 000/s
// (bench/BENCH.md). The price is that a stop of the world (a GC's) waits
// for the loop's tick, 250 µs at most.
type timerfdTicks struct {
	fd   int
	keep bool // keeps its P while it waits
	read [8]byte
}

// newTicker returns nil when the system offers no timerfd.
func newTicker(keepP bool) ticker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return &timerfdTicks{fd: fd, keep: keepP}
}

func (t *timerfdTicks) every(first time.Time, period time.Duration) { setTimer(t.fd, first, period) }

func (t *timerfdTicks) tick(lend bool) bool {
	for {
		var errno syscall.Errno
		if t.keep && !lend {
			_, _, errno = unix.RawSyscall(unix.SYS_READ, uintptr(t.fd), uintptr(unsafe.Pointer(&t.read[0])), uintptr(len(t.read)))
		} else {
			_, _, errno = unix.Syscall(unix.SYS_READ, uintptr(t.fd), uintptr(unsafe.Pointer(&t.read[0])), uintptr(len(t.read)))
		}
		if errno != unix.EINTR {
			return errno == 0
		}
	}
}

func (t *timerfdTicks) close() { unix.Close(t.fd) }
