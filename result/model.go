package result

import (
	"encoding/json"

	"github.com/loadprobe/loadprobe/internal/finitejson"
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
	return USL(m.Sigma, m.Kappa, m.Lambda, n)
}

// USL is the Universal Scalability Law's throughput at n with coefficients
// σ, κ and λ: λn / (1 + σ(n−1) + κn(n−1)).
func USL(sigma, kappa, lambda, n float64) float64 {
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
