package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Runs that measure capacity do not overlap (docs/measurement.md,
// "Runs that measure capacity do not overlap"): two ramps in one process
// share its CPU, and each would read the other's load as the target's.
// At most max_parallel_runs ramps and profiles run at once; a continuous
// probe runs beside them only when its load is small against each one's.

// smallShare is how small a continuous probe's load must be against a
// ramp's peak to run beside it: 1%, a few requests per second beside
// hundreds, which moves the generator's CPU by less than the noise of a
// busy machine.
const smallShare = 0.01

// beside reports whether a and b may run at once without counting as
// overlapping each other: two continuous probes, or a continuous probe
// whose load is small against a ramp's of the same loop (connections
// against connections, requests per second against requests per second).
// Two ramps never are.
func beside(a, b *claim) bool {
	switch {
	case a.continuous && b.continuous:
		return true
	case a.continuous:
		return small(a, b)
	case b.continuous:
		return small(b, a)
	}
	return false
}

func small(c, ramp *claim) bool {
	return c.closedLoop == ramp.closedLoop && c.peak <= smallShare*ramp.peak
}

// parallelBlocker says why c may not run beside the runs under way, ""
// when it may: a ramp needs a free slot under max_parallel_runs, and a
// continuous probe and a ramp run together only when the one's load is
// small against the other's. Callers hold s.mu.
func (s *Scheduler) parallelBlocker(c *claim) string {
	for _, e := range s.active {
		if !beside(c, e) && (c.continuous || e.continuous) {
			return e.who() + " is running, and " + c.name + " may not run beside it"
		}
	}
	if !c.continuous && s.ramps() >= s.maxParallel() {
		return fmt.Sprintf("max_parallel_runs %d: %s running", s.maxParallel(), strings.Join(s.rampNames(), ", "))
	}
	return ""
}

// crowds reports whether c, starting now, would keep the earlier waiter e
// from starting when its turn comes: c takes the last slot it needs, or
// one of them is a continuous probe the other may not run beside.
// Callers hold s.mu.
func (s *Scheduler) crowds(c, e *claim) bool {
	if beside(c, e) {
		return false
	}
	return c.continuous || e.continuous || s.ramps()+1 >= s.maxParallel()
}

// ramps counts the runs under way that are not continuous. Callers hold s.mu.
func (s *Scheduler) ramps() int { return len(s.rampNames()) }

// rampNames names the runs under way that are not continuous. Callers hold s.mu.
func (s *Scheduler) rampNames() []string {
	var names []string
	for _, e := range s.active {
		if !e.continuous {
			names = append(names, e.name)
		}
	}
	return names
}

func (s *Scheduler) maxParallel() int { return max(s.cfg.MaxParallelRuns, 1) }

// started and ended keep the spans of the runs under way and of the ended
// ones that may still overlap a step of one under way. Callers hold s.mu.
func (s *Scheduler) started(c *claim) {
	c.start, c.end = time.Now(), time.Time{}
	s.active = append(s.active, c)
	s.recent = append(s.recent, c)
}

func (s *Scheduler) ended(c *claim) {
	c.end = time.Now()
	s.active = slices.DeleteFunc(s.active, func(e *claim) bool { return e == c })
	// An ended run that ended before every run under way began can
	// overlap none of their steps.
	s.recent = slices.DeleteFunc(s.recent, func(e *claim) bool {
		if e.end.IsZero() {
			return false
		}
		for _, a := range s.active {
			if e.end.After(a.start) {
				return false
			}
		}
		return true
	})
}

// overlapping counts the runs other than c, and not allowed beside it,
// whose span overlapped the time since since.
func (s *Scheduler) overlapping(c *claim, since time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.recent {
		if e != c && !beside(c, e) && (e.end.IsZero() || e.end.After(since)) {
			n++
		}
	}
	return n
}
