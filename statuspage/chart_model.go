package statuspage

import (
	"strconv"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// modelSamples is how many points draw the fitted curve: smooth at the
// chart's width.
const modelSamples = 80

// modelCurve is the fitted law drawn across the level axis, and the line
// that names it.
type modelCurve struct {
	Points string
	Title  string
}

// peakMark is N*, the level at which the fitted law peaks.
type peakMark struct {
	X, TextX, TextY float64
	Anchor, Label   string
}

// errorColumn is a step's error ratio, drawn from the bottom of the plot
// to that share of its height (100% is the top).
type errorColumn struct {
	X, Y, Width, Height, TextX, TextY float64
	Label, Title, Anchor              string
}

// modelValues are the fitted law's goodput at the sampled levels, nil when
// there is no curve to draw: no fit, or an open-loop fit, whose N is
// Little's law's in-flight count and not the level the axis shows.
func modelValues(r result.Result, axis levelAxis) (levels, values []float64) {
	if !r.Mode.ClosedLoop() || !r.Model.HasFit() || axis.byIndex || axis.hi <= axis.lo {
		return nil, nil
	}
	levels = axis.samples(modelSamples)
	for _, n := range levels {
		values = append(values, r.Model.Throughput(n))
	}
	return levels, values
}

func newModelCurve(r result.Result, axis levelAxis, levels, values []float64, y func(float64) float64) *modelCurve {
	if levels == nil {
		return nil
	}
	c := &modelCurve{Title: "fitted " + analysis.ModelLine(r.Model, r.Words())}
	for i, n := range levels {
		if i > 0 {
			c.Points += " "
		}
		c.Points += coord(axis.level(n)) + "," + coord(y(values[i]))
	}
	return c
}

// newPeakMark places N* when the curve is drawn and N* lies on the axis;
// beyond it, the model line under the chart still names it.
func newPeakMark(r result.Result, axis levelAxis, drawn bool) *peakMark {
	if !drawn || !r.Model.HasPeak() || !axis.contains(r.Model.PeakLevel) {
		return nil
	}
	x := axis.level(r.Model.PeakLevel)
	// At the foot of the line: the fitted curve peaks at its top.
	m := &peakMark{X: x, TextX: x + 4, TextY: padT + plotH - 6, Anchor: "start",
		Label: "N* " + tick(roundTo3(r.Model.PeakLevel))}
	if padL+plotW-x < 60 {
		m.TextX, m.Anchor = x-4, "end"
	}
	return m
}

// errorColumns draws the error ratio of every step that had a failed
// attempt: a level where 95% of attempts got a 503 shows as a column 95%
// of the plot high, not only as the first-failure line.
func errorColumns(r result.Result, axis levelAxis) []errorColumn {
	const width = 12.0
	var cols []errorColumn
	for i, s := range r.Steps {
		if !(s.ErrorRatio > 0) {
			continue
		}
		h := plotH * min(s.ErrorRatio, 1)
		x := axis.step(i, s.Level)
		// The label stays inside the plot at its edges, clear of the axes' labels.
		anchor, tx := "middle", x
		switch {
		case x-padL < 20:
			anchor, tx = "start", x-width/2
		case padL+plotW-x < 20:
			anchor, tx = "end", x+width/2
		}
		cols = append(cols, errorColumn{X: x - width/2, Y: padT + plotH - h, Width: width, Height: h,
			TextX: tx, TextY: max(padT+plotH-h-4, padT+12), Anchor: anchor, Label: percent(s.ErrorRatio),
			Title: result.StepText(r.Words(), s) + ": " + percent(s.ErrorRatio) + " of attempts failed"})
	}
	return cols
}

// percent is a ratio as a percentage with about two significant digits.
func percent(r float64) string {
	p := 100 * r
	prec := 0
	if p < 10 {
		prec = 1
	}
	if p < 1 {
		prec = 2
	}
	return strconv.FormatFloat(p, 'f', prec, 64) + "%"
}

// roundTo3 rounds to three significant digits: 26.5, 96.5, 148.
func roundTo3(v float64) float64 {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
