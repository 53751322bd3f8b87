package schedule

import (
	"math/rand/v2"
	"time"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// The replicas of a fleet (--shard i/N, N > 1) run each probe together
// without a word between them: every run starts on a wall-clock boundary
// that each computes alike, a multiple of the probe's interval since the
// Unix epoch, and its steps at fixed offsets from it (prober/align.go).
// They step together within their clocks' skew. A lone loadprobe does not
// align: it has nobody to step with, and aligning would only delay its
// first run by up to an interval and leave a settle allowance idle between
// its steps.

// triggerGrid spaces the starts of runs asked for by hand on an aligned
// replica: a run asked of every replica within the same ten seconds starts
// on all of them at once.
const triggerGrid = 10 * time.Second

// aligned reports whether this scheduler's runs start on boundaries.
func (s *Scheduler) aligned() bool { return s.shard.Replicas() > 1 }

// grid is the spacing of p's aligned runs: its interval, or for a
// continuous probe the aligned length of one run and of its control, so
// that runs follow one another on every replica alike.
func (s *Scheduler) grid(p *plan.Probe) time.Duration {
	if !p.Schedule.Continuous {
		return time.Duration(p.Schedule.Interval)
	}
	var control *plan.Load
	if c, ok := s.control(p); ok {
		control = &c.Load
	}
	return fleet.PairLength(p.Load, control)
}

// firstRun is when a probe's first run is due: at once for a lone
// loadprobe, on the first boundary of its grid for a fleet's replica.
func (s *Scheduler) firstRun(p *plan.Probe, now time.Time) time.Time {
	if !s.aligned() {
		return now
	}
	return fleet.Boundary(now, s.grid(p))
}

// triggeredRun is when a run asked for by hand at now starts.
func (s *Scheduler) triggeredRun(now time.Time) time.Time {
	if !s.aligned() {
		return now
	}
	return fleet.Boundary(now, triggerGrid)
}

// nextRun is when p's next run is due after a run that started at started
// and ended, with outcome, at now. A lone loadprobe runs again an interval
// (plus jitter) after its last start, a continuous probe at once, and one
// that failed failedRetry after it. A fleet's replica takes the first
// boundary from then on instead, without jitter, which would differ from
// replica to replica.
func (s *Scheduler) nextRun(p *plan.Probe, started, now time.Time, outcome result.RunResult) time.Time {
	sched := p.Schedule
	var next time.Time
	switch {
	case sched.Continuous && outcome == result.ResultFailed:
		next = started.Add(failedRetry)
	case sched.Continuous:
		next = now
	default:
		next = started.Add(time.Duration(sched.Interval))
		if j := time.Duration(sched.Jitter); j > 0 && !s.aligned() {
			next = next.Add(rand.N(j))
		}
	}
	if s.aligned() {
		if next.Before(now) {
			next = now
		}
		next = fleet.Boundary(next, s.grid(p))
	}
	return next
}

// alignAt is the boundary l's run under way starts on, zero when it is not
// aligned. A run that waited past its boundary by more than a settle
// allowance (its host was busy) has missed its fleet: it runs unaligned,
// and the fleet's figures say which shard's steps are missing.
func (s *Scheduler) alignAt(l *probeLoop) time.Time {
	if !s.aligned() {
		return time.Time{}
	}
	if late := time.Since(l.due); late > fleet.SettleAllowance(l.probe.Load) {
		s.logger.Warn("Run started late: its steps are not aligned with the fleet's", "probe", l.probe.Name, "late", late)
		return time.Time{}
	}
	return l.due
}
