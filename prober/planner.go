package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/result"
)

// planner decides a run's stages one at a time, each from the steps run so
// far: a fixed list (a ramp, a profile) decides nothing, a search
// (search.go) chooses each level from what the last ones showed.
type planner interface {
	// next is the stage to run after done, the run's steps in the order
	// they ran; false when the run is over.
	next(done []result.Step) (stage, bool)
	// most is the number of stages a run takes at most.
	most() int
	// after is the longest the stages after stage i (0-based) can take.
	after(i int) time.Duration
}

// newPlanner is the planner of a probe's load: a search, or the fixed
// stages of plan, each holding the shard's share of its level.
func newPlanner(p config.Probe, sh config.Shard) planner {
	if p.Load.Search != nil {
		return newSearchPlan(p)
	}
	return fixedPlan(plan(p.Load, sh))
}

// fixedPlan runs its stages in order, whatever the steps show.
type fixedPlan []stage

func (f fixedPlan) next(done []result.Step) (stage, bool) {
	if len(done) >= len(f) {
		return stage{}, false
	}
	return f[len(done)], true
}

func (f fixedPlan) most() int { return len(f) }

func (f fixedPlan) after(i int) time.Duration {
	var d time.Duration
	for _, st := range f[min(i+1, len(f)):] {
		d += st.duration
	}
	return d
}
