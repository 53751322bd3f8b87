package script

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"

	"go.starlark.net/starlark"
)

// The bounds a step budget cannot keep (docs/scripts.md, "Bounds"): one
// step may be a builtin hashing a large string, or a string repeated or
// joined to hundreds of megabytes. A watchdog runs while any call does,
// and cancels a call that has run for TimeBound, or during which the
// process allocated MemoryBound; a call that allocated so much between two
// ticks ends with the same error as it leaves. (The garbage collector's
// goal follows the heap, so it is no bound.) Allocations count, not the
// heap's size: they only grow, where the heap falls whenever a collection
// frees a cancelled call's garbage, and a call measured from a heap that
// held it went unseen until its time ran out. The interpreter stops a
// cancelled call before its next step.
const (
	TimeBound   = 100 * time.Millisecond
	MemoryBound = 64 << 20
	tickEvery   = 2 * time.Millisecond
)

// watchdog tracks the calls under way. It counts its own ticks rather than
// reading the clock in each call: a call costs a map entry and one read of
// the allocations as it leaves (0.2 µs), not a clock read.
type watchdog struct {
	mu      sync.Mutex
	calls   map[*starlark.Thread]*state
	tick    uint64
	allocs  uint64 // the bytes the process allocated, at the last tick
	running bool
	sample  []metrics.Sample
}

var watch = &watchdog{
	calls:  map[*starlark.Thread]*state{},
	sample: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}},
}

func (w *watchdog) enter(t *starlark.Thread, st *state) {
	w.mu.Lock()
	if !w.running {
		w.running = true
		w.allocs = w.read()
		go w.watch()
	}
	st.tick, st.allocs = w.tick, w.allocs
	w.calls[t] = st
	w.mu.Unlock()
}

func (w *watchdog) read() uint64 {
	metrics.Read(w.sample)
	return w.sample[0].Value.Uint64()
}

// leave ends t's call; the error is the memory bound's when the call
// allocated past it between two ticks (one step repeating a string to
// 128 MiB can), which no tick saw.
func (w *watchdog) leave(t *starlark.Thread, st *state) error {
	w.mu.Lock()
	delete(w.calls, t)
	w.mu.Unlock()
	if allocs := w.read(); allocs > st.allocs+MemoryBound {
		return errors.New("Starlark computation cancelled: " + memoryBound(allocs-st.allocs))
	}
	return nil
}

// watch ticks until no call is under way.
func (w *watchdog) watch() {
	ticker := time.NewTicker(tickEvery)
	defer ticker.Stop()
	for range ticker.C {
		if !w.check() {
			return
		}
	}
}

// check cancels the calls past their bounds; false when none is under way
// and the watchdog stops.
func (w *watchdog) check() bool {
	w.mu.Lock()
	w.tick++
	w.allocs = w.read()
	overMemory := false
	if len(w.calls) == 0 {
		w.running = false
		w.mu.Unlock()
		return false
	}
	for t, st := range w.calls {
		switch {
		case w.allocs > st.allocs+MemoryBound:
			t.Cancel(memoryBound(w.allocs - st.allocs))
			overMemory = true
		case time.Duration(w.tick-st.tick)*tickEvery > TimeBound:
			t.Cancel("the time bound (" + TimeBound.String() + ")")
		}
	}
	w.mu.Unlock()
	if overMemory {
		// What the cancelled calls held is garbage now: give it back.
		runtime.GC()
	}
	return true
}

func memoryBound(allocated uint64) string {
	return "the memory bound (" + strconv.FormatUint(allocated>>20, 10) + " MiB allocated)"
}
