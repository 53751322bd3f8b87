package schedule

import (
	"context"
	"errors"

	"github.com/loadprobe/loadprobe/result"
)

// The pause switch stops all load: Pause ends every run under way at once
// (aborted, by pause) and holds every run due until Resume, which starts
// the runs held and the runs pause cut short again (docs/guards.md, "The
// pause switch"). With a store the switch outlives a restart.

// pauseStop is the cause a paused run's context ends with.
var pauseStop = &result.Stop{Abort: result.Abort{By: result.ByPause}}

// Pause stops all load until Resume.
func (s *Scheduler) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused {
		return
	}
	s.paused, s.resumed = true, make(chan struct{})
	for _, l := range s.runs {
		if l.stopRun != nil {
			l.stopRun(pauseStop)
		}
	}
	s.keepPaused(true)
}

// Resume lets runs start again.
func (s *Scheduler) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.paused {
		return
	}
	s.paused = false
	close(s.resumed)
	s.keepPaused(false)
}

// Paused reports whether the pause switch holds all load.
func (s *Scheduler) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// keepPaused writes the switch to the store. Callers hold s.mu.
func (s *Scheduler) keepPaused(paused bool) {
	if s.store == nil {
		return
	}
	if err := s.store.SavePaused(paused); err != nil {
		s.logger.Error("Cannot keep the pause switch across a restart", "paused", paused, "err", err)
	}
}

// unpaused waits until the switch lets l run, then returns the context of
// its run, which Pause ends; false when ctx ends first.
func (s *Scheduler) unpaused(ctx context.Context, l *probeLoop) (context.Context, bool) {
	for {
		s.mu.Lock()
		if !s.paused {
			rctx, stop := context.WithCancelCause(ctx)
			l.stopRun = stop
			s.mu.Unlock()
			return rctx, true
		}
		resumed := s.resumed
		s.mu.Unlock()
		select {
		case <-resumed:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// runEnded forgets the context of l's run.
func (s *Scheduler) runEnded(l *probeLoop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.stopRun != nil {
		l.stopRun(nil)
		l.stopRun = nil
	}
}

// cutByPause reports whether the pause switch ended the run of rctx.
func cutByPause(rctx context.Context) bool {
	var st *result.Stop
	return errors.As(context.Cause(rctx), &st) && st.Abort.By == result.ByPause
}
