package schedule

import (
	"context"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// FleetJudge reads back the fleet's run that r, this replica's finished
// run of p, was part of (fleet.Reader.Judge); see Options.FleetJudge. It
// returns when ctx ends.
type FleetJudge func(ctx context.Context, p *plan.Probe, r result.Result) *result.Fleet

// judgeFleet judges r in a goroutine of its own, so that the probe's next
// run is not held up by the wait for the other shards' series; Wait waits
// for it.
func (s *Scheduler) judgeFleet(ctx context.Context, l *probeLoop, r result.Result) {
	// A fleet's search read its fleet's run as it went (r.Fleet).
	if s.judge == nil || r.Fleet != nil || l.probe.Schedule.Continuous || (r.Ended != result.ResultCompleted && r.Ended != result.ResultAborted) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f := s.judge(ctx, l.probe, r)
		if f == nil || ctx.Err() != nil {
			return
		}
		if s.setFleet(l, r.Started, f) {
			s.save()
		}
	}()
}

// setFleet adds f to l's last result if that is still the run started at
// started. The result is replaced, never changed in place: readers hold it.
func (s *Scheduler) setFleet(l *probeLoop, started time.Time, f *result.Fleet) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.state.Last == nil || !l.state.Last.Started.Equal(started) {
		return false
	}
	r := *l.state.Last
	r.Fleet = f
	l.state.Last = &r
	return true
}
