package result

import (
	"encoding/json"
	"math"

	"github.com/loadprobe/loadprobe/internal/finitejson"
	"github.com/loadprobe/loadprobe/plan"
)

// Verdict says what fitting the Universal Scalability Law to a run gave
// (docs/model.md, "Verdicts").
type Verdict string

// The verdicts. Only fitted and no_peak carry coefficients.
const (
	// VerdictFitted: σ, κ and λ, and the peak N* they predict.
	VerdictFitted Verdict = "fitted"
	// VerdictNoPeak: κ cannot be told from 0 (the ramp never left the
	// region where throughput still grows): σ and λ of the law with κ = 0,
	// and no N*.
	VerdictNoPeak Verdict = "no_peak"
	// VerdictTooFewLevels: fewer than minModelLevels usable levels.
	VerdictTooFewLevels Verdict = "too_few_levels"
	// VerdictNotPhysical: the best fit sits on σ = 1 (no scaling at all),
	// or the points cannot tell the coefficients apart.
	VerdictNotPhysical Verdict = "not_physical"
	// VerdictPoorFit: the law misses the points by more than maxFitError.
	VerdictPoorFit Verdict = "poor_fit"
)

const (
	// minModelLevels is the fewest usable levels a fit needs: three
	// coefficients and at least two degrees of freedom left to judge them.
	minModelLevels = 5
	// maxFitError is the highest fit_error_ratio a fit may have and still
	// be reported: beyond it the law does not describe the target.
	maxFitError = 0.10
	// kappaSignificance is how many standard errors κ must stand above 0
	// to be told from it (about a 95% interval).
	kappaSignificance = 2.0
)

// Model is the Universal Scalability Law fitted to a run's levels,
// X(N) = λN / (1 + σ(N−1) + κN(N−1)): σ is contention (a lock, a pool, a
// single thread), κ coherency (cross-talk: throughput falls past N*), λ the
// throughput of one. Coefficients are meaningful only when HasFit says so;
// the JSON carries them only then (see MarshalJSON).
type Model struct {
	Verdict                                Verdict
	Sigma, Kappa, Lambda                   float64
	SigmaStderr, KappaStderr, LambdaStderr float64
	// PeakLevel is N* = √((1−σ)/κ), PeakThroughput X(N*); set with Kappa.
	PeakLevel, PeakThroughput float64
	// FitErrorRatio is the root mean square of the residuals over the mean
	// measured throughput.
	FitErrorRatio float64
	// Points is the number of levels fitted.
	Points int
}

// HasFit reports whether the model carries σ and λ (and the fit's error).
func (m *Model) HasFit() bool {
	return m != nil && (m.Verdict == VerdictFitted || m.Verdict == VerdictNoPeak)
}

// HasPeak reports whether the model carries κ and the peak N*, X(N*).
func (m *Model) HasPeak() bool { return m != nil && m.Verdict == VerdictFitted }

// Throughput is the law's X(n) with the model's coefficients (κ 0 without
// a peak).
func (m *Model) Throughput(n float64) float64 {
	return usl(m.Sigma, m.Kappa, m.Lambda, n)
}

func usl(sigma, kappa, lambda, n float64) float64 {
	return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
}

// modelJSON is the wire form: the coefficients are absent, not zero, when
// there is no fit (σ = 0 is a real answer).
type modelJSON struct {
	Kind           string   `json:"kind,omitempty"`
	Verdict        Verdict  `json:"verdict"`
	Sigma          *float64 `json:"sigma,omitempty"`
	Kappa          *float64 `json:"kappa,omitempty"`
	Lambda         *float64 `json:"lambda,omitempty"`
	SigmaStderr    *float64 `json:"sigma_stderr,omitempty"`
	KappaStderr    *float64 `json:"kappa_stderr,omitempty"`
	LambdaStderr   *float64 `json:"lambda_stderr,omitempty"`
	PeakLevel      *float64 `json:"peak_level,omitempty"`
	PeakThroughput *float64 `json:"peak_throughput,omitempty"`
	FitErrorRatio  *float64 `json:"fit_error_ratio,omitempty"`
	Points         *int     `json:"points,omitempty"`
}

// MarshalJSON writes {"kind":"usl","verdict":…, coefficients…} for a fit,
// and {"verdict":…} alone without one.
func (m Model) MarshalJSON() ([]byte, error) {
	w := modelJSON{Verdict: m.Verdict}
	if m.HasFit() {
		w.Kind = "usl"
		w.Sigma, w.Lambda = &m.Sigma, &m.Lambda
		w.SigmaStderr, w.LambdaStderr = &m.SigmaStderr, &m.LambdaStderr
		w.FitErrorRatio, w.Points = &m.FitErrorRatio, &m.Points
	}
	if m.HasPeak() {
		w.Kappa, w.KappaStderr = &m.Kappa, &m.KappaStderr
		w.PeakLevel, w.PeakThroughput = &m.PeakLevel, &m.PeakThroughput
	}
	return finitejson.Marshal(w) // a coefficient that is not finite reads null, as every figure (docs/results.md)
}

// UnmarshalJSON reads what MarshalJSON writes (the store keeps results as
// JSON).
func (m *Model) UnmarshalJSON(b []byte) error {
	var w modelJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Model{Verdict: w.Verdict}
	for _, f := range []struct {
		dst *float64
		src *float64
	}{
		{&m.Sigma, w.Sigma}, {&m.Kappa, w.Kappa}, {&m.Lambda, w.Lambda},
		{&m.SigmaStderr, w.SigmaStderr}, {&m.KappaStderr, w.KappaStderr},
		{&m.LambdaStderr, w.LambdaStderr}, {&m.PeakLevel, w.PeakLevel},
		{&m.PeakThroughput, w.PeakThroughput}, {&m.FitErrorRatio, w.FitErrorRatio},
	} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if w.Points != nil {
		m.Points = *w.Points
	}
	return nil
}

// model fits the law to the run's usable levels; nil for a phases profile,
// which is not a ramp.
func (a *analysis) model() *Model {
	pts, ok := a.modelPoints()
	if !ok {
		return nil
	}
	return FitUSL(pts)
}

// modelPoints are the levels the law is fitted to, as (N, X): the steps that
// held their load and whose level is below the lowest level that failed (a
// search measures levels out of order). N is the level in closed loop; in
// open loop it is Little's law's N, goodput × mean latency of the successes
// (docs/model.md, "Open loop"). A step without a success has no point.
func (a *analysis) modelPoints() ([]Point, bool) {
	closed := a.r.Mode.ClosedLoop()
	if !closed && a.r.Mode != plan.ModeRate {
		return nil, false
	}
	failed := math.Inf(1)
	for _, s := range a.r.Steps {
		if a.overErrors(s) {
			failed = min(failed, s.Level)
		}
	}
	var pts []Point
	for _, s := range a.r.Steps {
		if s.Level >= failed || !a.held(s) || s.Goodput <= 0 || s.Succeeded() <= 0 {
			continue
		}
		n := s.Level
		if !closed {
			n = s.Goodput * s.Latency.Mean
		}
		if n > 0 && !math.IsNaN(n) {
			pts = append(pts, Point{Level: n, Throughput: s.Goodput})
		}
	}
	return pts, true
}

// FitUSL fits the Universal Scalability Law to points of (N, X) by bounded
// least squares (σ in [0, 1), κ ≥ 0, λ > 0) and gives its verdict.
func FitUSL(pts []Point) *Model {
	if len(pts) < minModelLevels {
		return &Model{Verdict: VerdictTooFewLevels}
	}
	f, ok := fitLaw(pts, true)
	if !ok || !(f.p[1] > kappaSignificance*f.stderr[1]) {
		f, ok = fitLaw(pts, false)
		f.verdict = VerdictNoPeak
	}
	sigma, kappa, lambda := f.p[0], f.p[1], f.p[2]
	if !ok || sigma >= 1-1e-6 || !(lambda > 0) {
		return &Model{Verdict: VerdictNotPhysical}
	}
	var mean float64
	for _, pt := range pts {
		mean += pt.Throughput
	}
	mean /= float64(len(pts))
	errRatio := math.Sqrt(f.sse/float64(len(pts))) / mean
	if errRatio > maxFitError {
		return &Model{Verdict: VerdictPoorFit}
	}
	m := &Model{
		Verdict: f.verdict, Sigma: sigma, Lambda: lambda,
		SigmaStderr: f.stderr[0], LambdaStderr: f.stderr[2],
		FitErrorRatio: errRatio, Points: len(pts),
	}
	if f.verdict == VerdictFitted {
		m.Kappa, m.KappaStderr = kappa, f.stderr[1]
		m.PeakLevel = math.Sqrt((1 - sigma) / kappa)
		m.PeakThroughput = m.Throughput(m.PeakLevel)
	}
	return m
}

type lawFit struct {
	p, stderr []float64 // σ, κ, λ
	sse       float64
	verdict   Verdict
}

// fitLaw fits σ, κ (fixed at 0 unless withKappa) and λ to pts, from a few
// starting points, and keeps the best. ok is false when no start gave
// finite coefficients with standard errors.
func fitLaw(pts []Point, withKappa bool) (lawFit, bool) {
	kappaMax := math.Inf(1)
	if !withKappa {
		kappaMax = 0
	}
	ls := &leastSquares{
		lower:  []float64{0, 0, 0},
		upper:  []float64{1, kappaMax, math.Inf(1)},
		points: len(pts),
		residuals: func(p, r []float64) {
			for i, pt := range pts {
				r[i] = usl(p[0], p[1], p[2], pt.Level) - pt.Throughput
			}
		},
		jacobian: func(p []float64, jac [][]float64) {
			for i, pt := range pts {
				n := pt.Level
				d := 1 + p[0]*(n-1) + p[1]*n*(n-1)
				jac[i][0] = -p[2] * n * (n - 1) / (d * d)
				jac[i][1] = -p[2] * n * n * (n - 1) / (d * d)
				jac[i][2] = n / d
			}
		},
	}
	best := lawFit{verdict: VerdictFitted, sse: math.Inf(1)}
	for _, start := range startingPoints(pts, withKappa) {
		p, sse := ls.solve(start)
		if sse < best.sse && !math.IsNaN(sse) {
			best.p, best.sse = p, sse
		}
	}
	if best.p == nil {
		return best, false
	}
	stderr, ok := ls.covariance(best.p, best.sse)
	best.stderr = stderr
	return best, ok
}

// startingPoints are where the search starts: Gunther's linearisation
// (with λ the best throughput per unit of N, N/C(N) − 1 = σ(N−1) +
// κN(N−1) is linear in σ and κ), and the linear law itself with σ small
// and large, for points the linearisation reads badly.
func startingPoints(pts []Point, withKappa bool) [][]float64 {
	lambda := 0.0
	for _, pt := range pts {
		lambda = max(lambda, pt.Throughput/pt.Level)
	}
	// Least squares of y = σx + κz, x = N−1, z = N(N−1), by the 2×2
	// normal equations.
	var sxx, sxz, szz, sxy, szy float64
	for _, pt := range pts {
		x, z := pt.Level-1, pt.Level*(pt.Level-1)
		y := lambda*pt.Level/pt.Throughput - 1
		sxx, sxz, szz, sxy, szy = sxx+x*x, sxz+x*z, szz+z*z, sxy+x*y, szy+z*y
	}
	sigma, kappa := 0.0, 0.0
	if det := sxx*szz - sxz*sxz; withKappa && det != 0 {
		sigma, kappa = (sxy*szz-szy*sxz)/det, (szy*sxx-sxy*sxz)/det
	} else if sxx != 0 {
		sigma = sxy / sxx
	}
	return [][]float64{
		{min(max(sigma, 0), 0.99), max(kappa, 0), lambda},
		{0.01, 0, lambda},
		{0.5, 0, lambda},
	}
}
