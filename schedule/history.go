package schedule

import (
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// historyRuns bounds each probe's history: two days of hourly runs, which
// the status page draws as a small chart, in a file read whole at start.
const historyRuns = 48

// keepsHistory reports whether runs of l's probe join its history: with a
// store only (the history is what the store keeps), and not for a
// continuous probe, whose runs replace each other every few seconds and
// whose figures Prometheus keeps.
func (s *Scheduler) keepsHistory(l *probeLoop) bool {
	return s.store != nil && !l.probe.Schedule.Continuous
}

// withRun is h with r added at its end, the oldest runs dropped beyond
// historyRuns. It never changes h in place: readers of a snapshot hold it.
func withRun(h []state.Run, r result.Result) []state.Run {
	start := max(0, len(h)+1-historyRuns)
	out := make([]state.Run, 0, len(h)+1-start)
	out = append(out, h[start:]...)
	return append(out, state.RunOf(r))
}
