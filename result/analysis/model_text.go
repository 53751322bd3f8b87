package analysis

import (
	"fmt"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// verdictText says in words why a model has no coefficients.
var verdictText = map[result.Verdict]string{
	result.VerdictTooFewLevels: fmt.Sprintf("fewer than %d levels held their load below the first failure", minModelLevels),
	result.VerdictNotPhysical:  "the best fit has no scaling at all (σ = 1) or cannot tell its coefficients apart",
	result.VerdictPoorFit:      fmt.Sprintf("the Universal Scalability Law misses the measured goodput by more than %s", fmtPct(maxFitError)),
}

// ModelLine is m in one line, as run's table and the status page show it:
// "USL σ 0.0325 ± 0.0012, κ 0.00138 ± 1.4e-05, λ 39.1/s; peak 375/s at
// 26.5 connections (fit error 0.5% over 9 levels)". Empty for no model.
func ModelLine(m *result.Model, words plan.Words) string {
	if m == nil {
		return ""
	}
	if !m.HasFit() {
		return fmt.Sprintf("no fit (%s: %s)", m.Verdict, verdictText[m.Verdict])
	}
	fit := fmt.Sprintf("(fit error %s over %d levels)", fmtPct(m.FitErrorRatio), m.Points)
	sigma := fmt.Sprintf("USL σ %s ± %s", fmtNum(m.Sigma), fmtNum(m.SigmaStderr))
	lambda := fmt.Sprintf("λ %s/s", fmtNum(m.Lambda))
	if !m.HasPeak() {
		return fmt.Sprintf("%s, %s, κ not measurable: no peak in reach %s", sigma, lambda, fit)
	}
	return fmt.Sprintf("%s, κ %s ± %s, %s; peak %s/s at %s %s", sigma, fmtNum(m.Kappa), fmtNum(m.KappaStderr),
		lambda, fmtNum(m.PeakThroughput), peakLevel(words, m.PeakLevel), fit)
}

// peakLevel names N*: connections (or streams, sessions) in closed loop; in
// open loop, requests in flight (Little's law's N), not a rate.
func peakLevel(words plan.Words, n float64) string {
	if words.Mode.ClosedLoop() {
		return fmtNum(n) + " " + words.Unit()
	}
	return fmtNum(n) + " in flight"
}
