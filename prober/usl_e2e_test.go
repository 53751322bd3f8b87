package prober

import (
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// uslTarget serves requests whose service time makes a closed loop of N
// connections follow the Universal Scalability Law: each request is held
// R(n) = (1 + σ(n−1) + κn(n−1)) / λ, n the requests in flight when it
// arrives, so X(N) = N / R(N) = λN / (1 + σ(N−1) + κN(N−1)).
func uslTarget(sigma, kappa, lambda float64) func() http.Handler {
	return func() http.Handler {
		var inFlight atomic.Int64
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			n := float64(inFlight.Add(1))
			defer inFlight.Add(-1)
			hold := (1 + sigma*(n-1) + kappa*n*(n-1)) / lambda
			time.Sleep(time.Duration(hold * float64(time.Second)))
		})
	}
}

// A ramp of 9 levels against a target that follows the law gives a fit
// whose σ and κ agree with an independent fit of the same points (a
// Nelder–Mead search over σ, ln κ, ln λ) within 10%, and whose predicted
// peak lies within 25% of the level where goodput measured highest.
func TestModelOfALawFollowingTarget(t *testing.T) {
	const sigma, kappa, lambda = 0.03, 0.0015, 40.0 // N* ≈ 25, X(N*) ≈ 382/s
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/", `concurrency: [1, 2, 4, 8, 16, 24, 32, 48, 64]
step_duration: 1s`)
	r := simRun(t, p, Options{}, uslTarget(sigma, kappa, lambda))
	var pts []result.Point
	peak := r.Steps[0]
	for _, s := range r.Steps {
		t.Logf("level %g: goodput %.1f/s, load held %.2f, mean %.1fms", s.Level, s.Goodput, s.LoadHeldRatio, 1e3*s.Latency.Mean)
		pts = append(pts, result.Point{Level: s.Level, Throughput: s.Goodput})
		if s.Goodput > peak.Goodput {
			peak = s
		}
	}
	m := r.Model
	if m == nil || m.Verdict != result.VerdictFitted {
		t.Fatalf("model %+v, want a fit", m)
	}
	t.Logf("fit: σ %.4f ± %.4f, κ %.6f ± %.6f, λ %.2f ± %.2f, N* %.1f, X(N*) %.1f, error %.3f, %d points",
		m.Sigma, m.SigmaStderr, m.Kappa, m.KappaStderr, m.Lambda, m.LambdaStderr, m.PeakLevel, m.PeakThroughput, m.FitErrorRatio, m.Points)
	if m.Points != 9 {
		t.Errorf("fitted %d levels, want all 9 (none failed, all held their load)", m.Points)
	}
	is, ik, il := nelderMeadUSL(pts)
	t.Logf("independent fit: σ %.4f, κ %.6f, λ %.2f", is, ik, il)
	if !within(m.Sigma, is, 0.10) || !within(m.Kappa, ik, 0.10) {
		t.Errorf("σ %.4f κ %.6f; the independent fit has σ %.4f κ %.6f: not within 10%%", m.Sigma, m.Kappa, is, ik)
	}
	if !within(m.PeakLevel, peak.Level, 0.25) {
		t.Errorf("peak_level %.1f, not within 25%% of %g, the level of the highest goodput measured (%.1f/s)", m.PeakLevel, peak.Level, peak.Goodput)
	}
}

// nelderMeadUSL fits the law to pts by minimising the sum of squared
// residuals with a Nelder–Mead simplex over (σ, ln κ, ln λ): another
// method than the engine's, so their agreement says both found the
// minimum.
func nelderMeadUSL(pts []result.Point) (sigma, kappa, lambda float64) {
	sse := func(v [3]float64) float64 {
		s := min(max(v[0], 0), 0.999)
		var sum float64
		for _, pt := range pts {
			n := pt.Level
			x := math.Exp(v[2]) * n / (1 + s*(n-1) + math.Exp(v[1])*n*(n-1))
			sum += (x - pt.Throughput) * (x - pt.Throughput)
		}
		return sum
	}
	x1 := pts[0].Throughput / pts[0].Level
	simplex := [4][3]float64{{0.1, math.Log(1e-3), math.Log(x1)}}
	for i := 1; i < 4; i++ {
		simplex[i] = simplex[0]
		simplex[i][i-1] += []float64{0.1, 1, 0.2}[i-1]
	}
	var f [4]float64
	for i := range simplex {
		f[i] = sse(simplex[i])
	}
	for iter := 0; iter < 5000; iter++ {
		// order: best first
		for i := 1; i < 4; i++ {
			for j := i; j > 0 && f[j] < f[j-1]; j-- {
				f[j], f[j-1], simplex[j], simplex[j-1] = f[j-1], f[j], simplex[j-1], simplex[j]
			}
		}
		var c [3]float64
		for i := range 3 {
			for d := range 3 {
				c[d] += simplex[i][d] / 3
			}
		}
		at := func(t float64) [3]float64 {
			var v [3]float64
			for d := range 3 {
				v[d] = c[d] + t*(simplex[3][d]-c[d])
			}
			return v
		}
		r := at(-1)
		fr := sse(r)
		switch {
		case fr < f[0]:
			if e := at(-2); sse(e) < fr {
				simplex[3], f[3] = e, sse(e)
			} else {
				simplex[3], f[3] = r, fr
			}
		case fr < f[2]:
			simplex[3], f[3] = r, fr
		default:
			if k := at(0.5); sse(k) < f[3] {
				simplex[3], f[3] = k, sse(k)
				continue
			}
			for i := 1; i < 4; i++ {
				for d := range 3 {
					simplex[i][d] = simplex[0][d] + 0.5*(simplex[i][d]-simplex[0][d])
				}
				f[i] = sse(simplex[i])
			}
		}
	}
	best := simplex[0]
	for i := range simplex {
		if f[i] < sse(best) {
			best = simplex[i]
		}
	}
	return min(max(best[0], 0), 0.999), math.Exp(best[1]), math.Exp(best[2])
}
