package statuspage

import (
	"math"
	"strconv"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// The chart's frame, in SVG user units.
const (
	chartW, chartH = 720.0, 330.0
	padL, padR     = 66.0, 74.0
	padT, padB     = 46.0, 50.0
	plotW, plotH   = chartW - padL - padR, chartH - padT - padB
	divisions      = 4 // horizontal grid lines above 0, shared by both axes
)

// chartView is a run's ramp as the SVG template of status.html draws it:
// every coordinate computed here, every text left for the template to
// escape. Goodput (left axis) and the latency quantile of the rules (right
// axis) against level, placed in proportion to its value (levelAxis), with
// the three breaking points marked by vertical lines, the latency budget by
// a horizontal one, the capacity by a ring on the goodput curve, each
// step's error ratio by a column, and the fitted scalability law by a curve
// with its peak N* marked (docs/model.md). The brackets of
// the breaking points are shaded bands; a search's levels, measured out of
// order, stand where their values put them.
type chartView struct {
	Frame                     frame
	Name, Quantile, AxisTitle string
	Grid                      []gridLine
	Ticks                     []levelTick
	Budget                    *budgetLine // nil when the budget is off the latency axis
	Marks                     []breakMark
	Brackets                  []bracketBand
	Good, Lat                 curve
	// Candidate is the goodput of a candidate measured beside the run
	// (docs/compare.md); nil without one.
	Candidate *curve
	Capacity  *dot
	Model     *modelCurve // nil without a curve to draw
	Peak      *peakMark   // nil without N* on the axis
	Errors    []errorColumn
}

// frame holds the fixed positions of the chart: the plot's edges and where
// the axes' labels and titles go.
type frame struct {
	Width, Height, Left, Top, PlotWidth, PlotHeight, Right, Bottom, MidX, MidY float64
	GoodLabelX, LatLabelX, LatTitleX, TickEnd, TickLabelY, AxisTitleY          float64
}

var chartFrame = frame{
	Width: chartW, Height: chartH, Left: padL, Top: padT, PlotWidth: plotW, PlotHeight: plotH,
	Right: padL + plotW, Bottom: padT + plotH, MidX: padL + plotW/2, MidY: padT + plotH/2,
	GoodLabelX: padL - 8, LatLabelX: padL + plotW + 8, LatTitleX: chartW - 12,
	TickEnd: padT + plotH + 5, TickLabelY: padT + plotH + 19, AxisTitleY: chartH - 8,
}

type gridLine struct {
	Y, LabelY float64
	Axis      bool   // the zero line, drawn as an axis
	Good, Lat string // the labels of both value axes
}

type levelTick struct {
	X     float64
	Label string
}

type budgetLine struct {
	Y, TextX, TextY float64
	Text            string
}

type breakMark struct {
	Class, Label, Anchor string
	X, Top, TextX, TextY float64
}

// bracketBand shades a breaking point's bracket: from the level that kept
// the rule (the plot's left edge when none was measured) to the one that
// broke it.
type bracketBand struct {
	Class       string
	X, Width    float64
	Title       string
	Top, Height float64
}

type curve struct {
	Class  string // good or lat
	Points string // the polyline's "x,y x,y ..."
	Dots   []dot
	// Line joins the dots; measured goodput is dots alone when the fitted
	// curve runs through them.
	Line bool
}

type dot struct {
	X, Y  float64
	Title string
}

// chart lays out the chart of r, nil when r has no step yet.
func chart(r result.Result, rules plan.Rules) *chartView {
	if len(r.Steps) == 0 {
		return nil
	}
	// A search measures out of order and some levels twice: the chart
	// reads them as the rules do, in order of level, each once.
	r.Steps = analysis.ByLevel(r.Mode, r.Steps)
	lq, budget := analysis.LatencyRule(rules)
	axis := newLevelAxis(r)
	x := func(i int) float64 { return axis.step(i, r.Steps[i].Level) }
	modelLevels, modelGood := modelValues(r, axis)
	maxGood, maxLat := 0.0, 0.0
	for _, s := range r.Steps {
		maxGood = math.Max(maxGood, s.Goodput)
		maxLat = math.Max(maxLat, lq.Of(s.Latency))
	}
	for _, v := range modelGood {
		maxGood = math.Max(maxGood, v)
	}
	var cand []result.Step
	if cmp := r.Compare; cmp != nil && cmp.Candidate != nil {
		cand = analysis.ByLevel(r.Mode, cmp.Candidate.Whole())
		for _, s := range cand {
			maxGood = math.Max(maxGood, s.Goodput)
		}
	}
	goodStep, latStep := niceStep(maxGood/divisions), niceStep(maxLat/divisions)
	goodTop, latTop := goodStep*divisions, latStep*divisions
	yGood := func(v float64) float64 { return padT + plotH*(1-v/goodTop) }
	yLat := func(v float64) float64 { return padT + plotH*(1-v/latTop) }

	c := &chartView{Frame: chartFrame, Name: r.Name, Quantile: lq.Label, AxisTitle: axisTitle(r.Words())}
	c.Grid = gridLines(padT, plotH, divisions, goodStep, latStep, latTick)
	c.Ticks = axis.ticks(r)
	if budget > 0 && budget <= latTop {
		y := yLat(budget)
		c.Budget = &budgetLine{Y: y, TextX: padL + plotW - 4, TextY: y - 4, Text: seconds(budget) + " budget"}
	}
	c.Marks, c.Brackets = breakMarks(r, r.Steps, x), brackets(r, axis)
	c.Errors = errorColumns(r, axis)
	c.Model = newModelCurve(r, axis, modelLevels, modelGood, yGood)
	c.Peak = newPeakMark(r, axis, c.Model != nil)
	order := axis.order(r.Steps)
	c.Good = newCurve("good", r.Words(), r.Steps, order, x, yGood, func(s result.Step) float64 { return s.Goodput },
		func(v float64) string { return "goodput " + rate(v) + "/s" })
	c.Good.Line = c.Model == nil
	c.Lat = newCurve("lat", r.Words(), r.Steps, order, x, yLat, func(s result.Step) float64 { return lq.Of(s.Latency) },
		func(v float64) string { return lq.Label + " " + seconds(v) })
	if cand != nil {
		// The candidate ran the baseline's levels, the same index apart.
		cx := func(i int) float64 { return axis.step(i, cand[i].Level) }
		cv := newCurve("candidate", r.Words(), cand, axis.order(cand), cx, yGood, func(s result.Step) float64 { return s.Goodput },
			func(v float64) string { return "candidate's goodput " + rate(v) + "/s" })
		c.Candidate = &cv
	}
	if p := r.Capacity; p != nil {
		for i, s := range r.Steps {
			if s.Level == p.Level {
				c.Capacity = &dot{X: x(i), Y: yGood(s.Goodput),
					Title: "capacity " + rate(p.Throughput) + "/s at " + r.Words().Level(p.Level) + ": the highest goodput within the budgets"}
				break
			}
		}
	}
	return c
}

// markClass is each rule's mark's CSS class.
var markClass = map[result.Rule]string{result.RuleKnee: "knee", result.RuleLatencyBudget: "budget", result.RuleFirstFailure: "failure"}

// breakMarks places the breaking points, their labels above the plot, one
// row per rule so that neighbours never overlap.
func breakMarks(r result.Result, steps []result.Step, x func(int) float64) []breakMark {
	var marks []breakMark
	for k, rule := range result.Rules {
		p := r.BreakingPoints.Of(rule)
		if p == nil {
			continue
		}
		for i, s := range steps {
			if s.Level != p.Level {
				continue
			}
			anchor, tx := "middle", x(i)
			switch {
			case tx-padL < 50:
				anchor, tx = "start", tx-4
			case chartW-padR-tx < 50:
				anchor, tx = "end", tx+4
			}
			row := padT - float64(2-k)*13
			marks = append(marks, breakMark{Class: markClass[rule], Label: rule.Text(), Anchor: anchor,
				X: x(i), Top: row - 4, TextX: tx, TextY: row - 8})
			break
		}
	}
	return marks
}

// brackets shades each breaking point's bracket between the positions of
// its two levels (the plot's left edge when none was measured below).
func brackets(r result.Result, axis levelAxis) []bracketBand {
	var bands []bracketBand
	for _, rule := range result.Rules {
		p := r.BreakingPoints.Of(rule)
		if p == nil || p.Bracket[1] == 0 || !axis.contains(p.Bracket[1]) {
			continue // never fired, or phases
		}
		x0, x1 := float64(padL), axis.level(p.Bracket[1])
		if axis.contains(p.Bracket[0]) {
			x0 = axis.level(p.Bracket[0])
		}
		bands = append(bands, bracketBand{Class: markClass[rule], X: x0, Width: x1 - x0, Top: padT, Height: plotH,
			Title: rule.Text() + " between " + plan.FormatLevel(p.Bracket[0]) + " and " + r.Words().Level(p.Bracket[1])})
	}
	return bands
}

// newCurve draws v of the steps, joined in order (left to right).
func newCurve(class string, words plan.Words, steps []result.Step, order []int, x func(int) float64, y func(float64) float64,
	v func(result.Step) float64, title func(float64) string) curve {
	c := curve{Class: class, Line: true}
	for _, i := range order {
		s := steps[i]
		c.add(x(i), y(v(s)), result.StepText(words, s)+": "+title(v(s)))
	}
	return c
}

// add puts a dot at x, y on c, joined to the one before.
func (c *curve) add(x, y float64, title string) {
	if c.Points != "" {
		c.Points += " "
	}
	c.Points += coord(x) + "," + coord(y)
	c.Dots = append(c.Dots, dot{X: x, Y: y, Title: title})
}

// gridLines are the horizontal lines of a plot from top down height, n
// above its axis, labelled with goodStep's multiples on the left and with
// latStep's, written by latLabel, on the right.
func gridLines(top, height float64, n int, goodStep, latStep float64, latLabel func(float64) string) []gridLine {
	var lines []gridLine
	for i := 0; i <= n; i++ {
		y := top + height*(1-float64(i)/float64(n))
		lines = append(lines, gridLine{Y: y, LabelY: y + 4, Axis: i == 0,
			Good: tick(goodStep * float64(i)), Lat: latLabel(latStep * float64(i))})
	}
	return lines
}

// coord is an SVG coordinate to a tenth of a unit.
func coord(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// niceStep rounds v up to a grid step people read at a glance: 1, 2, 2.5,
// 3, 4, 5, 6 or 8 times a power of ten.
func niceStep(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 0.25
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 3, 4, 5, 6, 8} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func tick(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func latTick(v float64) string {
	if v == 0 {
		return "0"
	}
	return seconds(v)
}
