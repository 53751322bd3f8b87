package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
)

// share turns a probe's planned stages into this replica's share of them.
// Each stage keeps the fleet's level to report on its step (every
// replica's series carry the configured level, so that Prometheus sums
// them by level), while its load becomes the replica's share.
func share(s fleet.Shard, mode plan.Mode, stages []stage) []stage {
	for i, st := range stages {
		stages[i].fleetLevel = (st.level + st.rampTo) / 2
		if mode == plan.ModeConcurrency {
			stages[i].level = float64(s.Connections(int(st.level)))
			stages[i].rampTo = stages[i].level
		} else {
			stages[i].level, stages[i].rampTo = s.Rate(st.level), s.Rate(st.rampTo)
		}
	}
	return stages
}

// idle holds a closed-loop step whose share is no connection for its
// duration, sending nothing, so that the replica steps with the fleet
// instead of rushing ahead. It ends early when the run does.
func (e *engine) idle(end time.Time) {
	t := time.NewTimer(time.Until(end))
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.ctx.Done():
	}
}
