package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
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
func newPlanner(p *plan.Probe, sh fleet.Shard) planner {
	if p.Load.Search != nil {
		return newSearchPlan(p, sh)
	}
	return fixedPlan(stagesOf(p.Load, sh))
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

// stage is one step of a run's plan: a closed-loop level, an open-loop rate
// level, or a phase of a rate profile.
type stage struct {
	level    float64 // connections or requests per second (the start rate of a phase)
	rampTo   float64 // phases: the rate at the end of the stage; equal to level when flat
	name     string
	duration time.Duration
	// search is result.SearchGrow or result.SearchRefine for a search's
	// stage, and why says what for, in progress; both empty otherwise.
	search, why string
	// fleetLevel is the level the step reports: the fleet's configured
	// one, of which level is this replica's share (shard.go).
	fleetLevel float64
	// recovery marks a window of the recovery after a run
	// (recovery.go): measured whole, without a warmup.
	recovery bool
}

// stagesOf lists the stages of a probe's load in the order they run, each
// holding the shard's share of its level.
func stagesOf(l plan.Load, sh fleet.Shard) []stage {
	var stages []stage
	for _, st := range l.Steps() {
		stages = append(stages, stage{level: st.Level, rampTo: st.RampTo, name: st.Name, duration: st.Duration})
	}
	return share(sh, l.Mode(), stages)
}
