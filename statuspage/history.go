package statuspage

import (
	"fmt"
	"math"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// The history chart's frame, in SVG user units: small, beside the ramp.
const (
	histW, histH         = 420.0, 170.0
	histPadL, histPadR   = 50.0, 56.0
	histPadT, histPadB   = 12.0, 34.0
	histPlotW, histPlotH = histW - histPadL - histPadR, histH - histPadT - histPadB
	histDivisions        = 2
	historyMinRuns       = 2 // one run is the last run, charted beside
)

// historyView is a probe's stored runs as a small chart: the capacity of
// each run (left axis, goodput) and the level of its knee (right axis),
// oldest on the left, one run per place (docs/commands.md, "History").
type historyView struct {
	Frame                 frame
	Name, LevelTitle      string
	Grid                  []gridLine
	Capacity, Knee        curve
	FirstLabel, LastLabel string // when the oldest and the latest run started
	Runs                  int
	// Change marks the run where the capacity's latest change point
	// begins; nil without one.
	Change *changeMark
}

// changeMark is a vertical line at a run, and what it says.
type changeMark struct {
	X     float64
	Label string
}

var historyFrame = frame{
	Width: histW, Height: histH, Left: histPadL, Top: histPadT, PlotWidth: histPlotW, PlotHeight: histPlotH,
	Right: histPadL + histPlotW, Bottom: histPadT + histPlotH, MidX: histPadL + histPlotW/2, MidY: histPadT + histPlotH/2,
	GoodLabelX: histPadL - 6, LatLabelX: histPadL + histPlotW + 6, LatTitleX: histW - 8,
	TickEnd: histPadT + histPlotH + 4, TickLabelY: histPadT + histPlotH + 14, AxisTitleY: histH - 4,
}

// history lays out the chart of h, nil with fewer than two runs.
func history(name string, words plan.Words, h []state.Run, change *result.CapacityChange, now time.Time) *historyView {
	if len(h) < historyMinRuns {
		return nil
	}
	maxCap, maxKnee := 0.0, 0.0
	for _, r := range h {
		if r.Capacity != nil {
			maxCap = math.Max(maxCap, r.Capacity.Throughput)
		}
		if r.Knee != nil {
			maxKnee = math.Max(maxKnee, r.Knee.Level)
		}
	}
	// The knee's axis reaches twice its highest level: a steady capacity
	// and a steady knee, the usual history, would otherwise both run
	// along the top and one would hide the other. The capacity keeps the
	// upper half, the knee the lower.
	capStep, kneeStep := niceStep(maxCap/histDivisions), niceStep(2*maxKnee/histDivisions)
	yCap := func(v float64) float64 { return histPadT + histPlotH*(1-v/(capStep*histDivisions)) }
	yKnee := func(v float64) float64 { return histPadT + histPlotH*(1-v/(kneeStep*histDivisions)) }
	x := func(i int) float64 { return histPadL + histPlotW*float64(i)/float64(len(h)-1) }

	v := &historyView{Frame: historyFrame, Name: name, LevelTitle: "knee (" + words.Unit() + ")", Runs: len(h),
		FirstLabel: ago(now, h[0].Started), LastLabel: ago(now, h[len(h)-1].Started),
		Capacity: curve{Class: "good", Line: true}, Knee: curve{Class: "knee", Line: true}}
	v.Grid = gridLines(histPadT, histPlotH, histDivisions, capStep, kneeStep, tick)
	for i, r := range h {
		run := "run " + ago(now, r.Started) + " (" + string(r.Ended)
		if !r.Valid {
			run += ", not valid"
		}
		run += ")"
		if p := r.Capacity; p != nil {
			v.Capacity.add(x(i), yCap(p.Throughput), run+": capacity "+rate(p.Throughput)+"/s at "+words.Level(p.Level))
		}
		if p := r.Knee; p != nil {
			v.Knee.add(x(i), yKnee(p.Level), run+": knee at "+words.Level(p.Level)+" (goodput "+rate(p.Throughput)+"/s)")
		}
	}
	if i := changeAt(h, change); i >= 0 {
		v.Change = &changeMark{X: x(i), Label: fmt.Sprintf("capacity changed here: %s/s before, %s/s since", rate(change.Before), rate(change.After))}
	}
	return v
}

// changeAt is the index in h of the run where change begins: it counts
// the completed valid runs with a capacity, as the change does
// (docs/measurement.md, "Capacity changes"); -1 without a change.
func changeAt(h []state.Run, change *result.CapacityChange) int {
	if change == nil {
		return -1
	}
	counted := 0
	for i := len(h) - 1; i >= 0; i-- {
		if r := h[i]; r.Ended == result.ResultCompleted && r.Valid && r.Capacity != nil {
			if counted++; counted == change.RunsAgo {
				return i
			}
		}
	}
	return -1
}
