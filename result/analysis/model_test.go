package analysis

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// readSPECSDM91 reads result/analysis/testdata/specsdm91.csv (its source is named in
// the file) as (users, scripts per hour) points.
func readSPECSDM91(t *testing.T) []result.Point {
	t.Helper()
	f, err := os.Open("testdata/specsdm91.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := csv.NewReader(f)
	rd.Comment = '#'
	rows, err := rd.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var pts []result.Point
	for _, row := range rows[1:] { // after the header
		n, err1 := strconv.ParseFloat(row[0], 64)
		x, err2 := strconv.ParseFloat(row[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad row %v", row)
		}
		pts = append(pts, result.Point{Level: n, Throughput: x})
	}
	return pts
}

func near(got, want, frac float64) bool { return math.Abs(got-want) <= frac*math.Abs(want) }

// The published fit of the SPEC SDM91 benchmark (Gunther, Guerrilla
// Capacity Planning, and the R usl package's summary of the same data):
// σ = 0.02773, κ = 1.044e-4, λ = 89.99, a peak of 1 884 scripts an hour at
// about 96 users, and the standard errors R's nls reports.
func TestFitReproducesSPECSDM91(t *testing.T) {
	m := FitUSL(readSPECSDM91(t))
	if m.Verdict != result.VerdictFitted {
		t.Fatalf("verdict %q, want fitted: %+v", m.Verdict, m)
	}
	t.Logf("SPEC SDM91: %+v", *m)
	const sigma, kappa, lambda = 0.0277285, 0.0001044, 89.9952330
	wantPeak := math.Sqrt((1 - sigma) / kappa)
	for _, c := range []struct {
		name      string
		got, want float64
		within    float64
	}{
		{"sigma", m.Sigma, sigma, 0.005},
		{"kappa", m.Kappa, kappa, 0.005},
		{"lambda", m.Lambda, lambda, 0.005},
		{"peak_level", m.PeakLevel, wantPeak, 0.005},
		{"peak_throughput", m.PeakThroughput, 1884, 0.005},
		// R's standard errors, to the 3% their printed digits and a
		// different numerical Jacobian allow.
		{"sigma_stderr", m.SigmaStderr, 0.0091217, 0.03},
		{"kappa_stderr", m.KappaStderr, 0.0000199, 0.03},
		{"lambda_stderr", m.LambdaStderr, 14.2134894, 0.03},
	} {
		if !near(c.got, c.want, c.within) {
			t.Errorf("%s = %.6g, want %.6g within %g%%", c.name, c.got, c.want, 100*c.within)
		}
	}
	if math.Abs(wantPeak-96.5) > 0.5 {
		t.Fatalf("published coefficients give N* %.2f, not about 96", wantPeak)
	}
	// R's residual standard error is 82.8 on 4 degrees of freedom:
	// √(82.8²·4/7) over the mean throughput, 1410.
	if !near(m.FitErrorRatio, math.Sqrt(82.8*82.8*4/7)/1410.4, 0.01) {
		t.Errorf("fit_error_ratio %.4f, want the RMS residual over the mean throughput, 0.0444", m.FitErrorRatio)
	}
	if m.Points != 7 {
		t.Errorf("points %d, want 7", m.Points)
	}
}

// modelStep is a clean step of a closed- or open-loop ramp at level with
// the given goodput and mean latency.
func modelStep(level, goodput, mean float64) result.Step {
	n := int64(goodput * 5)
	return result.Step{
		Level: level, DurationSeconds: 5, Attempts: n, Throughput: goodput, Goodput: goodput,
		Latency:   result.Latency{Mean: mean, P50: mean, P90: mean, P95: mean, P99: mean, P999: mean, Max: mean},
		Responses: result.Codes{result.HTTPStatus(200): n}, Errors: map[string]int64{},
		InFlight: goodput * mean, LoadHeldRatio: 0.97,
	}
}

// lawRamp is a closed-loop ramp at levels whose goodput follows the law
// (times 1+wobble[i] where given).
func lawRamp(sigma, kappa, lambda float64, levels []float64, wobble ...float64) *result.Result {
	r := &result.Result{Mode: plan.ModeConcurrency}
	for i, n := range levels {
		x := result.USL(sigma, kappa, lambda, n)
		if i < len(wobble) {
			x *= 1 + wobble[i]
		}
		r.Steps = append(r.Steps, modelStep(n, x, n/x))
	}
	return r
}

var doubling = []float64{1, 2, 4, 8, 16, 32, 64, 128}

func TestModelVerdicts(t *testing.T) {
	failedSecond := lawRamp(0.02, 0.0015, 40, doubling)
	for i := 1; i < len(failedSecond.Steps); i++ {
		s := &failedSecond.Steps[i]
		s.ErrorRatio, s.Errors["timeout"] = 0.5, s.Attempts
	}
	notHeld := lawRamp(0.02, 0.0015, 40, doubling[:5])
	notHeld.Steps[2].LoadHeldRatio = 0.4

	little := &result.Result{Mode: plan.ModeRate}
	for _, n := range doubling {
		x := result.USL(0.03, 0.0008, 50, n)
		little.Steps = append(little.Steps, modelStep(x, x, n/x)) // level: the offered rate, met
	}
	phases := lawRamp(0.02, 0.0015, 40, doubling)
	phases.Mode = plan.ModePhases

	tests := []struct {
		name    string
		r       *result.Result
		verdict result.Verdict
		points  int
		sigma   float64 // checked within 2% (or 0.002 absolute) when the verdict carries it
		kappa   float64
	}{
		{name: "the law itself", r: lawRamp(0.02, 0.0015, 40, doubling), verdict: result.VerdictFitted, points: 8, sigma: 0.02, kappa: 0.0015},
		{name: "four levels", r: lawRamp(0.02, 0.0015, 40, doubling[:4]), verdict: result.VerdictTooFewLevels},
		{name: "failed at its second level", r: failedSecond, verdict: result.VerdictTooFewLevels},
		{name: "a level that did not hold its load is left out", r: notHeld, verdict: result.VerdictTooFewLevels},
		{name: "never left the linear region", r: lawRamp(0.01, 0, 100, []float64{1, 2, 3, 4, 5, 6}, 0.002, -0.003, 0.001, 0.003, -0.002, 0.001), verdict: result.VerdictNoPeak, points: 6, sigma: 0.01},
		{name: "no scaling at all", r: lawRamp(1, 0, 100, doubling), verdict: result.VerdictNotPhysical},
		{name: "points the law cannot follow", r: lawRamp(0.02, 0.0015, 40, doubling, 0, 0.5, -0.4, 0.5, -0.4, 0.5, -0.4, 0.5), verdict: result.VerdictPoorFit},
		{name: "open loop through Little's law", r: little, verdict: result.VerdictFitted, points: 8, sigma: 0.03, kappa: 0.0008},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			Analyze(tc.r, plan.DefaultRules)
			m := tc.r.Model
			if m == nil || m.Verdict != tc.verdict {
				t.Fatalf("model %+v, want verdict %q", m, tc.verdict)
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			js := string(b)
			if !m.HasFit() {
				if want := `{"verdict":"` + string(tc.verdict) + `"}`; js != want {
					t.Errorf("JSON %s, want %s: a verdict and no coefficient", js, want)
				}
				return
			}
			if m.Points != tc.points {
				t.Errorf("points %d, want %d", m.Points, tc.points)
			}
			if math.Abs(m.Sigma-tc.sigma) > max(0.02*tc.sigma, 0.002) {
				t.Errorf("sigma %.5f, want %.5f", m.Sigma, tc.sigma)
			}
			if m.HasPeak() {
				if !near(m.Kappa, tc.kappa, 0.02) {
					t.Errorf("kappa %.6f, want %.6f", m.Kappa, tc.kappa)
				}
				if want := math.Sqrt((1 - tc.sigma) / tc.kappa); !near(m.PeakLevel, want, 0.02) {
					t.Errorf("peak_level %.2f, want %.2f", m.PeakLevel, want)
				}
			} else if strings.Contains(js, "kappa") || strings.Contains(js, "peak_level") {
				t.Errorf("JSON %s carries a κ or an N* that was not measured", js)
			}
			var back result.Model
			if err := json.Unmarshal(b, &back); err != nil || back != *m {
				t.Errorf("JSON round trip: %+v, %v; want %+v", back, err, *m)
			}
		})
	}
	Analyze(phases, plan.DefaultRules)
	if phases.Model != nil {
		t.Errorf("a phases profile got a model %+v; it is not a ramp", phases.Model)
	}
}

// The JSON of a fit carries the fields and names of the result's model
// object.
func TestModelJSON(t *testing.T) {
	r := lawRamp(0.02, 0.0015, 40, doubling)
	Analyze(r, plan.DefaultRules)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Model map[string]any `json:"model"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "verdict", "sigma", "kappa", "lambda", "sigma_stderr", "kappa_stderr", "lambda_stderr", "peak_level", "peak_throughput", "fit_error_ratio", "points"} {
		if _, ok := doc.Model[k]; !ok {
			t.Errorf("model JSON lacks %q: %v", k, doc.Model)
		}
	}
	if len(doc.Model) != 12 || doc.Model["kind"] != "usl" || doc.Model["verdict"] != "fitted" {
		t.Errorf("model JSON %v", doc.Model)
	}
}

func TestModelLine(t *testing.T) {
	for _, tc := range []struct {
		m    *result.Model
		mode plan.Mode
		want string
	}{
		{&result.Model{Verdict: result.VerdictFitted, Sigma: 0.0325, SigmaStderr: 0.0012, Kappa: 0.001383, KappaStderr: 0.000014, Lambda: 39.07, PeakLevel: 26.5, PeakThroughput: 374.6, FitErrorRatio: 0.005, Points: 9}, plan.ModeConcurrency,
			"USL σ 0.0325 ± 0.0012, κ 0.00138 ± 0.000014, λ 39.1/s; peak 375/s at 26.5 connections (fit error 0.5% over 9 levels)"},
		{&result.Model{Verdict: result.VerdictNoPeak, Sigma: 0.01, SigmaStderr: 0.001, Lambda: 100, FitErrorRatio: 0.003, Points: 6}, plan.ModeRate,
			"USL σ 0.01 ± 0.001, λ 100/s, κ not measurable: no peak in reach (fit error 0.3% over 6 levels)"},
		{&result.Model{Verdict: result.VerdictTooFewLevels}, plan.ModeConcurrency,
			"no fit (too_few_levels: fewer than 5 levels held their load below the first failure)"},
	} {
		if got := ModelLine(tc.m, plan.Words{Mode: tc.mode}); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
