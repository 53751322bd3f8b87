package schedule

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/plan"
)

// Admission: a run waits in acquire until its hosts are free and its load
// fits under the caps, first come first served, and holds its claim until
// release.

// claim is what a run holds while it runs: its hosts (as keys: the host
// name and each address it resolves to) and its highest load against the
// caps. A run waiting in acquire holds its claim in the queue.
type claim struct {
	name string // the probe's, for a waiter to say whom it waits for
	keys []string
	conc int
	rate float64
	// What parallel.go needs: whether the probe runs back to back, its
	// loop, and its peak level; and when it ran (zero end: under way).
	continuous bool
	closedLoop bool
	peak       float64
	start, end time.Time
}

// claimFor is the claim of a run of p, and of its control when it has one:
// the control runs within the probe's reservation.
func (s *Scheduler) claimFor(ctx context.Context, p, control *plan.Probe, hasControl bool) *claim {
	c := &claim{name: p.Name, continuous: p.Schedule.Continuous, closedLoop: p.Load.Mode().ClosedLoop(), peak: p.Load.Peak()}
	probes := []*plan.Probe{p}
	if hasControl {
		probes = append(probes, control)
	}
	for _, q := range probes {
		host, conc, rate := demand(q)
		c.conc, c.rate = max(c.conc, conc), max(c.rate, rate)
		if host == "" {
			continue
		}
		c.keys = append(c.keys, "name "+host)
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err := s.lookup(rctx, host)
		cancel()
		if err != nil {
			// The run will say what is wrong with the name; the name
			// alone keys its host.
			continue
		}
		for _, a := range addrs {
			c.keys = append(c.keys, "addr "+a.Unmap().WithZone("").String())
		}
	}
	slices.Sort(c.keys)
	c.keys = slices.Compact(c.keys)
	return c
}

// demand is what a run of p asks for: its host and its highest level.
func demand(p *plan.Probe) (host string, conc int, rate float64) {
	host = strings.TrimSuffix(strings.ToLower(p.Request.URL.Hostname()), ".")
	if p.Load.Mode() == plan.ModeConcurrency {
		return host, int(p.Load.Peak()), 0
	}
	return host, 0, p.Load.Peak()
}

// queueInTurn puts l's claim c at the end of the queue, its first run in
// its turn among the probes that started with it: probes due at the same
// moment (the daemon's start, a reload that adds several) take a shared
// host in the order of the file, not in the order their goroutines happen
// to run, so that an operator knows which probe shows its figures first
// (docs/commands.md, "Scheduling").
func (s *Scheduler) queueInTurn(ctx context.Context, l *probeLoop, c *claim) {
	if l.after != nil {
		select {
		case <-l.after:
		case <-ctx.Done():
		}
		l.after = nil
	}
	s.mu.Lock()
	l.waitingOn = c
	s.queue = append(s.queue, c)
	s.mu.Unlock()
	l.markQueued()
}

// markQueued lets the loop after l queue its first run.
func (l *probeLoop) markQueued() {
	if l.queued != nil {
		close(l.queued)
		l.queued = nil
	}
}

// acquire waits until c, queued, finds its hosts free and its load fits
// under the caps, then reserves both. Waiters go first come, first served:
// a later run starts before an earlier one only when it shares no host with
// it and leaves it room under the caps, so a continuous probe that asks
// again the moment its run ends cannot starve a ramp. It returns false when
// ctx ends first.
func (s *Scheduler) acquire(ctx context.Context, c *claim) bool {
	s.mu.Lock()
	for {
		if ctx.Err() == nil && s.blocker(c) == "" {
			for _, k := range c.keys {
				s.busy[k] = c
			}
			s.usedConc += c.conc
			s.usedRate += c.rate
			s.started(c)
			s.leave(c)
			s.mu.Unlock()
			return true
		}
		freed := s.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
		}
		s.mu.Lock()
		if ctx.Err() != nil {
			s.leave(c)
			s.wake() // a later waiter may have waited behind this one
			s.mu.Unlock()
			return false
		}
	}
}

// blocker says what keeps c from taking its reservation now, "" when
// nothing does: a waiting probe's state names it
// (docs/commands.md, "The status page"). Callers hold s.mu.
func (s *Scheduler) blocker(c *claim) string {
	if why := s.conflict(c, 0, 0); why != "" {
		return why
	}
	if why := s.parallelBlocker(c); why != "" {
		return why
	}
	for _, e := range s.queue {
		if e == c {
			return ""
		}
		// An earlier waiter keeps its place: c must not take its host,
		// its slot among the parallel runs, nor the room under the caps
		// it will need.
		if shareKey(e, c) || s.crowds(c, e) || s.conflict(c, e.conc, e.rate) != "" && (e.conc > 0 && c.conc > 0 || e.rate > 0 && c.rate > 0) {
			return "behind " + e.who() + " in the queue"
		}
	}
	return ""
}

// who names the probe of c for a waiter's state: "canary (continuous)".
func (c *claim) who() string {
	if c.continuous {
		return c.name + " (continuous)"
	}
	return c.name
}

// hostOfKey is the host a key of claimFor stands for.
func hostOfKey(k string) string {
	_, host, _ := strings.Cut(k, " ")
	return host
}

// conflict says what keeps c from running now with extra load (conc,
// rate) reserved besides the runs under way: a run holding one of its
// hosts, or a cap it would exceed; "" when nothing does. Callers hold s.mu.
func (s *Scheduler) conflict(c *claim, conc int, rate float64) string {
	for _, k := range c.keys {
		if holder := s.busy[k]; holder != nil {
			return hostOfKey(k) + " is busy with " + holder.who()
		}
	}
	if used := s.usedConc + conc; used+c.conc > s.cfg.MaxConcurrency {
		return fmt.Sprintf("max_concurrency %d: %d connections in use, %d needed", s.cfg.MaxConcurrency, used, c.conc)
	}
	if used := s.usedRate + rate; used+c.rate > s.cfg.MaxRate {
		return fmt.Sprintf("max_rate %g: %g/s in use, %g/s needed", s.cfg.MaxRate, used, c.rate)
	}
	return ""
}

func shareKey(a, b *claim) bool {
	for _, k := range a.keys {
		if slices.Contains(b.keys, k) {
			return true
		}
	}
	return false
}

// leave takes c out of the queue. Callers hold s.mu.
func (s *Scheduler) leave(c *claim) {
	s.queue = slices.DeleteFunc(s.queue, func(q *claim) bool { return q == c })
}

// wake tells every waiter to look again. Callers hold s.mu.
func (s *Scheduler) wake() {
	close(s.freed)
	s.freed = make(chan struct{})
}

func (s *Scheduler) release(c *claim) {
	s.mu.Lock()
	for _, k := range c.keys {
		delete(s.busy, k)
	}
	s.usedConc -= c.conc
	s.usedRate -= c.rate
	s.ended(c)
	s.wake()
	s.mu.Unlock()
}
