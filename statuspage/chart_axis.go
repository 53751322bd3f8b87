package statuspage

import (
	"math"
	"slices"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// levelAxis places levels along x in proportion to their values: on a log
// scale for a ramp whose levels grow by a factor (1, 2, 4, ... read evenly
// spaced, as their doubling is), on a linear one otherwise. A phases
// profile is not a ramp: its phases stand one per equal step, in the order
// they ran.
type levelAxis struct {
	lo, hi  float64
	log     bool
	byIndex bool
	n       int // steps, for byIndex
}

// geometricRatio is the median ratio of neighbouring levels from which a
// ramp is drawn on a log scale: 2 for a doubling ramp, 1.1 for 10, 11, 12.
const geometricRatio = 1.5

func newLevelAxis(r result.Result) levelAxis {
	a := levelAxis{n: len(r.Steps), byIndex: r.Mode == plan.ModePhases}
	levels := distinctLevels(r.Steps)
	if a.byIndex || len(levels) == 0 {
		a.byIndex = true
		return a
	}
	a.lo, a.hi = levels[0], levels[len(levels)-1]
	if a.lo > 0 && len(levels) > 2 {
		ratios := make([]float64, 0, len(levels)-1)
		for i := 1; i < len(levels); i++ {
			ratios = append(ratios, levels[i]/levels[i-1])
		}
		slices.Sort(ratios)
		a.log = ratios[len(ratios)/2] >= geometricRatio
	}
	return a
}

// distinctLevels are the steps' levels, sorted, each once.
func distinctLevels(steps []result.Step) []float64 {
	levels := make([]float64, 0, len(steps))
	for _, s := range steps {
		levels = append(levels, s.Level)
	}
	slices.Sort(levels)
	return slices.Compact(levels)
}

// step is the x of step i.
func (a levelAxis) step(i int, level float64) float64 {
	if a.byIndex {
		if a.n == 1 {
			return padL + plotW/2
		}
		return padL + float64(i)*plotW/float64(a.n-1)
	}
	return a.level(level)
}

// level is the x of a level: the plot's middle when the axis has one level.
func (a levelAxis) level(v float64) float64 {
	if a.hi <= a.lo {
		return padL + plotW/2
	}
	f := (v - a.lo) / (a.hi - a.lo)
	if a.log {
		f = math.Log(v/a.lo) / math.Log(a.hi/a.lo)
	}
	return padL + f*plotW
}

// contains reports whether level v lies on the axis.
func (a levelAxis) contains(v float64) bool { return !a.byIndex && v >= a.lo && v <= a.hi }

// samples are n levels spread evenly along the axis, from lo to hi.
func (a levelAxis) samples(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		f := float64(i) / float64(n-1)
		out[i] = a.lo + f*(a.hi-a.lo)
		if a.log {
			out[i] = a.lo * math.Pow(a.hi/a.lo, f)
		}
	}
	return out
}

// minTickGap is the least distance between two labelled ticks: closer
// levels (a search's refinements) keep their tick mark but not a label
// that would overprint the last one.
const minTickGap = 26.0

// ticks marks every step along the axis, labelled where there is room.
func (a levelAxis) ticks(r result.Result) []levelTick {
	var ticks []levelTick
	last := math.Inf(-1)
	order := a.order(r.Steps)
	for _, i := range order {
		s := r.Steps[i]
		label := plan.FormatLevel(s.Level)
		if s.Name != "" {
			label = s.Name
		}
		x := a.step(i, s.Level)
		if len(ticks) > 0 && x == ticks[len(ticks)-1].X {
			continue // a level measured twice
		}
		if x-last < minTickGap {
			label = ""
		} else {
			last = x
		}
		ticks = append(ticks, levelTick{X: x, Label: label})
	}
	return ticks
}

// order is the steps' indices from left to right: the order they ran for
// phases, by level for a ramp (a search measures out of order).
func (a levelAxis) order(steps []result.Step) []int {
	idx := make([]int, len(steps))
	for i := range idx {
		idx[i] = i
	}
	if !a.byIndex {
		slices.SortStableFunc(idx, func(i, j int) int {
			switch {
			case steps[i].Level < steps[j].Level:
				return -1
			case steps[i].Level > steps[j].Level:
				return 1
			}
			return 0
		})
	}
	return idx
}
