package analysis

import (
	"math"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
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

// model fits the law to the run's usable levels; nil for a phases profile,
// which is not a ramp.
func (a *analysis) model() *result.Model {
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
func (a *analysis) modelPoints() ([]result.Point, bool) {
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
	var pts []result.Point
	for _, s := range a.r.Steps {
		if s.Level >= failed || !a.held(s) || s.Goodput <= 0 || s.Succeeded() <= 0 {
			continue
		}
		n := s.Level
		if !closed {
			n = s.Goodput * s.Latency.Mean
		}
		if n > 0 && !math.IsNaN(n) {
			pts = append(pts, result.Point{Level: n, Throughput: s.Goodput})
		}
	}
	return pts, true
}

// FitUSL fits the Universal Scalability Law to points of (N, X) by bounded
// least squares (σ in [0, 1), κ ≥ 0, λ > 0) and gives its verdict.
func FitUSL(pts []result.Point) *result.Model {
	if len(pts) < minModelLevels {
		return &result.Model{Verdict: result.VerdictTooFewLevels}
	}
	f, ok := fitLaw(pts, true)
	if !ok || !(f.p[1] > kappaSignificance*f.stderr[1]) {
		f, ok = fitLaw(pts, false)
		f.verdict = result.VerdictNoPeak
	}
	sigma, kappa, lambda := f.p[0], f.p[1], f.p[2]
	if !ok || sigma >= 1-1e-6 || !(lambda > 0) {
		return &result.Model{Verdict: result.VerdictNotPhysical}
	}
	var mean float64
	for _, pt := range pts {
		mean += pt.Throughput
	}
	mean /= float64(len(pts))
	errRatio := math.Sqrt(f.sse/float64(len(pts))) / mean
	if errRatio > maxFitError {
		return &result.Model{Verdict: result.VerdictPoorFit}
	}
	m := &result.Model{
		Verdict: f.verdict, Sigma: sigma, Lambda: lambda,
		SigmaStderr: f.stderr[0], LambdaStderr: f.stderr[2],
		FitErrorRatio: errRatio, Points: len(pts),
	}
	if f.verdict == result.VerdictFitted {
		m.Kappa, m.KappaStderr = kappa, f.stderr[1]
		m.PeakLevel = math.Sqrt((1 - sigma) / kappa)
		m.PeakThroughput = m.Throughput(m.PeakLevel)
	}
	return m
}

type lawFit struct {
	p, stderr []float64 // σ, κ, λ
	sse       float64
	verdict   result.Verdict
}

// fitLaw fits σ, κ (fixed at 0 unless withKappa) and λ to pts, from a few
// starting points, and keeps the best. ok is false when no start gave
// finite coefficients with standard errors.
func fitLaw(pts []result.Point, withKappa bool) (lawFit, bool) {
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
				r[i] = result.USL(p[0], p[1], p[2], pt.Level) - pt.Throughput
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
	best := lawFit{verdict: result.VerdictFitted, sse: math.Inf(1)}
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
func startingPoints(pts []result.Point, withKappa bool) [][]float64 {
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
