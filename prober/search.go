package prober

import (
	"fmt"
	"math"
	"time"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// searchPlan is the planner of a capacity search (docs/search.md): it grows
// by doubling from `from` while no rule has fired, then bisects each fired
// rule's bracket until it is within the precision, in at most max_steps
// steps. Every decision is taken afresh from the steps so far, read by the
// same rules as any run (analysis.Analyze), so that the search and its result
// can never disagree on where a rule fired.
type searchPlan struct {
	mode      plan.Mode
	rng       plan.SearchRange
	precision float64
	maxSteps  int
	rules     plan.Rules
	abort     float64 // abort.error_ratio
	duration  time.Duration
	// shard is this replica's part of a fleet's search: its levels are the
	// fleet's, each stage holding the shard's share (shard.go).
	shard fleet.Shard
}

func newSearchPlan(p *plan.Probe, sh fleet.Shard) *searchPlan {
	s := p.Load.Search
	return &searchPlan{
		mode: p.Load.Mode(), rng: s.Range(), precision: s.Precision, maxSteps: s.MaxSteps,
		rules: p.Rules, abort: p.Abort.ErrorRatio, duration: time.Duration(p.Load.StepDuration), shard: sh,
	}
}

func (s *searchPlan) most() int { return s.maxSteps }

func (s *searchPlan) after(i int) time.Duration {
	return time.Duration(max(s.maxSteps-i-1, 0)) * s.duration
}

// noiseTolerance is how far below its lower neighbour a level's goodput
// must read, inside a rising stretch, to be measured again: the knee rule's
// own tolerance (1 - knee_fraction) is what a reading may move by without
// moving the knee.
func (s *searchPlan) noiseTolerance() float64 { return 1 - s.rules.KneeFraction }

func (s *searchPlan) next(done []result.Step) (stage, bool) {
	if len(done) >= s.maxSteps {
		return stage{}, false
	}
	if len(done) == 0 {
		return s.stage(s.rng.From, result.SearchGrow, "growing from "+plan.FormatLevel(s.rng.From)), true
	}
	r := result.Result{Mode: s.mode, Steps: done}
	analysis.Analyze(&r, s.rules)
	k := s.known(done, r)
	if level, why, ok := s.again(done, k); ok {
		return s.stage(level, result.SearchRefine, why), true
	}
	if !k.fired(r) {
		if k.top >= s.rng.Max {
			return stage{}, false // no rule fired up to max
		}
		return s.stage(min(2*k.top, s.rng.Max), result.SearchGrow,
			"growing: no rule has fired up to "+plan.FormatLevel(k.top)), true
	}
	for _, rule := range result.Rules {
		bp := r.BreakingPoints.Of(rule)
		if bp == nil || rule == result.RuleKnee && bp.Level >= k.top {
			continue // never fired (a knee at the top is throughput still rising)
		}
		below, at := bp.Bracket[0], bp.Bracket[1]
		if below == 0 || s.within(below, at) {
			continue // fired at from (nothing below it is searched), or known well enough
		}
		if mid := s.middle(below, at); mid < k.ceiling {
			return s.stage(mid, result.SearchRefine, fmt.Sprintf("refining the %s between %s and %s",
				rule.Text(), plan.FormatLevel(below), plan.FormatLevel(at))), true
		}
	}
	return stage{}, false
}

// known is what the steps so far show the search: the highest level
// measured, the level it must stay below, and how often each level ran.
type known struct {
	top      float64
	ceiling  float64 // the first failure or the lowest level past abort.error_ratio; +Inf while none
	measured map[float64]int
	aborted  bool
}

func (s *searchPlan) known(done []result.Step, r result.Result) known {
	k := known{ceiling: math.Inf(1), measured: make(map[float64]int, len(done))}
	for _, st := range done {
		k.top = max(k.top, st.Level)
		k.measured[st.Level]++
		if st.ErrorRatio > s.abort {
			k.ceiling, k.aborted = min(k.ceiling, st.Level), true
		}
	}
	if f := r.BreakingPoints.FirstFailure; f != nil {
		k.ceiling = min(k.ceiling, f.Level)
	}
	return k
}

// fired reports whether a rule has fired, which ends the growing: the
// latency budget, the first failure, abort.error_ratio, or the knee below
// the highest level measured (at it, throughput is still rising).
func (k known) fired(r result.Result) bool {
	bp := r.BreakingPoints
	return bp.LatencyBudget != nil || bp.FirstFailure != nil || k.aborted || bp.Knee != nil && bp.Knee.Level < k.top
}

// again finds a level whose reading contradicts its neighbours, measured
// once so far and below the ceiling, to be measured once more before a
// bracket rests on it (docs/search.md, "Noise"): a goodput that dips below
// its lower neighbour's inside a rising stretch, or a latency budget broken
// below a level that kept it.
func (s *searchPlan) again(done []result.Step, k known) (float64, string, bool) {
	view := analysis.ByLevel(s.mode, done)
	lq, budget := analysis.LatencyRule(s.rules)
	over := func(st result.Step) bool { return lq.Of(st.Latency) > budget }
	for i := 1; i < len(view); i++ {
		lo, mid := view[i-1], view[i]
		if k.measured[mid.Level] > 1 || mid.Level >= k.ceiling {
			continue
		}
		// The stretch rises when the level above reads higher than the
		// one below; at the top, when the levels below rose to it.
		top := i+1 == len(view)
		rising := !top && view[i+1].Goodput > lo.Goodput || top && (i < 2 || lo.Goodput > view[i-2].Goodput)
		level := plan.FormatLevel(mid.Level)
		switch {
		case rising && mid.Goodput < (1-s.noiseTolerance())*lo.Goodput:
			return mid.Level, fmt.Sprintf("measuring %s again: its goodput dips below %s's", level, plan.FormatLevel(lo.Level)), true
		case !top && over(mid) && !over(view[i+1]):
			return mid.Level, fmt.Sprintf("measuring %s again: it broke the latency budget where %s kept it", level, plan.FormatLevel(view[i+1].Level)), true
		}
	}
	return 0, "", false
}

// within reports whether a bracket is known well enough: its width within
// the precision of its level, or adjacent connections.
func (s *searchPlan) within(below, at float64) bool {
	return at-below <= s.precision*at || s.mode.ClosedLoop() && at-below <= 1
}

// middle is the level halfway through a bracket: whole connections, whole
// requests per second while the bracket is wider than 2.
func (s *searchPlan) middle(below, at float64) float64 {
	mid := (below + at) / 2
	if s.mode.ClosedLoop() || at-below > 2 {
		mid = math.Floor(mid)
	}
	return mid
}

func (s *searchPlan) stage(level float64, search, why string) stage {
	st := []stage{{level: level, rampTo: level, duration: s.duration, search: search, why: why}}
	return share(s.shard, s.mode, st)[0]
}
