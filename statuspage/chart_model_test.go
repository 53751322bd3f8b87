package statuspage

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// lawStep is a step whose goodput follows the scalability law with σ 0.03,
// κ 0.0015 and λ 40 (N* ≈ 25.4), and a share failed of its attempts.
func lawStep(n, failed float64) result.Step {
	x := 40 * n / (1 + 0.03*(n-1) + 0.0015*n*(n-1))
	attempts := int64(5 * x / (1 - failed))
	return result.Step{
		Level: n, DurationSeconds: 5, Attempts: attempts, Goodput: x, Throughput: x / (1 - failed),
		ErrorRatio: failed, Errors: map[string]int64{"timeout": int64(failed * float64(attempts))},
		Latency: result.Latency{Mean: n / x, P99: 2 * n / x}, LoadHeldRatio: 0.97,
	}
}

// modelled is a doubling ramp to 128 connections that follows the law,
// where 95% of attempts failed at 128, analysed as the engine would.
func modelled(levels ...float64) result.Result {
	r := result.Result{Name: "law", Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Started: time.Now()}
	for _, n := range levels {
		failed := 0.0
		if n == 128 {
			failed = 0.95
		}
		r.Steps = append(r.Steps, lawStep(n, failed))
	}
	analysis.Analyze(&r, plan.DefaultRules)
	return r
}

// The chart of a fitted ramp: levels placed in proportion (log-scaled for
// a doubling ramp), measured goodput as points with the fitted curve
// through them, N* marked where the law peaks, and the 95% failed level as
// a column 95% of the plot high with its share written on it.
func TestChartDrawsTheModel(t *testing.T) {
	r := modelled(1, 2, 4, 8, 16, 32, 64, 128)
	if !r.Model.HasPeak() {
		t.Fatalf("model %+v, want a fit with a peak", r.Model)
	}
	states := []state.Probe{{Probe: probe("law", 1, 2, 4, 8, 16, 32, 64, 128), Last: &r}}
	_, body := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	svgText := regexp.MustCompile(`(?s)<svg class="ramp".*?</svg>`).FindString(body)
	svg := parseSVG(t, svgText)

	// Log scale: each doubling is the same distance along x.
	var xs []float64
	for _, d := range svg.find("circle", "good") {
		xs = append(xs, num(t, d.attr("cx")))
	}
	if len(xs) != 8 {
		t.Fatalf("%d goodput points, want 8", len(xs))
	}
	step := (xs[7] - xs[0]) / 7
	for i := 1; i < 8; i++ {
		if math.Abs(xs[i]-xs[i-1]-step) > 0.2 {
			t.Errorf("doubling levels at x %v: not evenly spaced on a log axis", xs)
			break
		}
	}
	xOf := func(n float64) float64 { return xs[0] + step*math.Log2(n) }

	if len(svg.find("polyline", "good")) != 0 {
		t.Error("measured goodput is joined by a line; with a fit it is points, and the curve is the model")
	}
	curve := svg.find("polyline", "model")
	if len(curve) != 1 {
		t.Fatalf("%d model curves, want 1", len(curve))
	}
	cp := points(t, curve[0].attr("points"))
	// The curve runs through the points (the data follow the law): at
	// each point's x, the curve's y is the point's y.
	for _, d := range svg.find("circle", "good")[:7] { // 128 failed: not fitted
		x, y := num(t, d.attr("cx")), num(t, d.attr("cy"))
		if cy := curveAt(cp, x); math.Abs(cy-y) > 1.5 {
			t.Errorf("point at x %.1f y %.1f; the fitted curve passes at y %.1f", x, y, cy)
		}
	}
	peak := svg.find("g", "mark peak")
	if len(peak) != 1 {
		t.Fatalf("%d N* marks, want 1", len(peak))
	}
	if x := num(t, peak[0].find("line", "")[0].attr("x1")); math.Abs(x-xOf(r.Model.PeakLevel)) > 0.5 {
		t.Errorf("N* marked at x %.1f, want %.1f (N* %.1f, between 16 and 32)", x, xOf(r.Model.PeakLevel), r.Model.PeakLevel)
	}
	if !strings.Contains(svgText, ">N* 25.4<") {
		t.Errorf("the N* mark is not labelled with its level 25.4:\n%s", svgText)
	}
	cols := svg.find("g", "errors")
	if len(cols) != 1 {
		t.Fatalf("%d error columns, want 1 (at 128 connections)", len(cols))
	}
	rect := cols[0].find("rect", "")[0]
	if h := num(t, rect.attr("height")); math.Abs(h-0.95*plotH) > 0.2 {
		t.Errorf("the 95%% level's column is %.1f high, want 95%% of the plot's %.0f", h, plotH)
	}
	if x := num(t, rect.attr("x")) + num(t, rect.attr("width"))/2; math.Abs(x-xs[7]) > 0.2 {
		t.Errorf("the error column stands at x %.1f, not at level 128's %.1f", x, xs[7])
	}
	for _, want := range []string{">95%<", "128 connections: 95% of attempts failed", `<span class="model">fitted USL</span>`, "model: USL σ 0.03 ± 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// curveAt is the polyline's y at x, linearly between its points.
func curveAt(ps [][2]float64, x float64) float64 {
	for i := 1; i < len(ps); i++ {
		if x <= ps[i][0] {
			f := (x - ps[i-1][0]) / (ps[i][0] - ps[i-1][0])
			return ps[i-1][1] + f*(ps[i][1]-ps[i-1][1])
		}
	}
	return ps[len(ps)-1][1]
}

// Levels that do not grow by a factor stand on a linear axis, in
// proportion to their values; a ramp too short for a fit keeps its goodput
// line and draws no curve.
func TestChartLevelAxis(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels []float64
		want   []float64 // x as a share of the plot's width
		fit    bool
	}{
		{"linear", []float64{10, 20, 30, 40, 50, 60}, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, true},
		{"doubling", []float64{4, 8, 16, 32}, []float64{0, 1.0 / 3, 2.0 / 3, 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := modelled(tc.levels...)
			c := chart(r, plan.DefaultRules)
			for i, tk := range c.Ticks {
				if got := (tk.X - padL) / plotW; math.Abs(got-tc.want[i]) > 1e-3 {
					t.Errorf("level %g at %.3f of the width, want %.3f", tc.levels[i], got, tc.want[i])
				}
			}
			if (c.Model != nil) != tc.fit || c.Good.Line == tc.fit {
				t.Errorf("%d levels: model curve %v, goodput line %v; want a curve %v and a line %v", len(tc.levels), c.Model != nil, c.Good.Line, tc.fit, !tc.fit)
			}
		})
	}
}

// An open-loop fit is over Little's law's N, not the offered rate the axis
// shows: no curve is drawn over rates, and the model line still shows.
func TestChartOpenLoopDrawsNoCurve(t *testing.T) {
	r := modelled(1, 2, 4, 8, 16, 32)
	r.Mode = plan.ModeRate
	for i := range r.Steps {
		r.Steps[i].Level = r.Steps[i].Goodput
	}
	analysis.Analyze(&r, plan.DefaultRules)
	if !r.Model.HasFit() {
		t.Fatalf("model %+v, want a fit through Little's law", r.Model)
	}
	if c := chart(r, plan.DefaultRules); c.Model != nil || c.Peak != nil {
		t.Errorf("an open-loop chart draws the model over rates: %+v %+v", c.Model, c.Peak)
	}
}
