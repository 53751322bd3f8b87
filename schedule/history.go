package schedule

import (
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// historyRuns bounds each probe's history: the runs its capacity changes
// are looked for in (docs/measurement.md, "Capacity changes"), four days
// of hourly runs, which the status page draws as a small chart, in a file
// read whole at start.
const historyRuns = 100

// keepsHistory reports whether runs of l's probe join its history: not
// for a continuous probe, whose runs replace each other every few seconds
// and whose figures Prometheus keeps. Without a store the history lasts
// as long as the process.
func keepsHistory(l *probeLoop) bool { return !l.probe.Schedule.Continuous }

// capacityChange is the latest change point of the capacities of h's
// completed valid runs.
func capacityChange(h []state.Run) *result.CapacityChange {
	var capacities []float64
	for _, r := range h {
		if r.Ended == result.ResultCompleted && r.Valid && r.Capacity != nil {
			capacities = append(capacities, r.Capacity.Throughput)
		}
	}
	return analysis.LatestChange(capacities)
}

// withRun is h with r added at its end, the oldest runs dropped beyond
// historyRuns. It never changes h in place: readers of a snapshot hold it.
func withRun(h []state.Run, r result.Result) []state.Run {
	start := max(0, len(h)+1-historyRuns)
	out := make([]state.Run, 0, len(h)+1-start)
	out = append(out, h[start:]...)
	return append(out, state.RunOf(r))
}
