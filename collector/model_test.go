package collector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

var modelFamilies = []string{
	"loadprobe_model_contention", "loadprobe_model_coherency", "loadprobe_model_single_throughput",
	"loadprobe_model_peak_level", "loadprobe_model_peak_throughput", "loadprobe_model_fit_error_ratio",
}

// The last run's fit is six gauges; a fit without κ drops κ and the peak,
// a verdict without coefficients drops them all: absent, never 0.
func TestModelGauges(t *testing.T) {
	fitted := &result.Model{
		Verdict: result.VerdictFitted, Sigma: 0.031, Kappa: 0.0004, Lambda: 140.2,
		PeakLevel: 49.2, PeakThroughput: 512, FitErrorRatio: 0.03, Points: 9,
	}
	const header = `
# HELP loadprobe_model_contention Contention coefficient σ of the Universal Scalability Law fitted to the last run (a lock, a pool, a single thread); absent without a fit.
# TYPE loadprobe_model_contention gauge
loadprobe_model_contention{probe="work"} 0.031
# HELP loadprobe_model_fit_error_ratio Root mean square error of the Universal Scalability Law fit of the last run over its mean goodput; absent without a fit.
# TYPE loadprobe_model_fit_error_ratio gauge
loadprobe_model_fit_error_ratio{probe="work"} 0.03
# HELP loadprobe_model_single_throughput Throughput of one (λ) in the Universal Scalability Law fitted to the last run, in successful responses per second; absent without a fit.
# TYPE loadprobe_model_single_throughput gauge
loadprobe_model_single_throughput{probe="work"} 140.2
`
	const peak = `
# HELP loadprobe_model_coherency Coherency coefficient κ of the Universal Scalability Law fitted to the last run (cross-talk that makes throughput fall past the peak); absent when the fit could not tell it from 0.
# TYPE loadprobe_model_coherency gauge
loadprobe_model_coherency{probe="work"} 0.0004
# HELP loadprobe_model_peak_level Load level N* at which the fitted Universal Scalability Law peaks, √((1−σ)/κ); absent without a measured κ.
# TYPE loadprobe_model_peak_level gauge
loadprobe_model_peak_level{probe="work"} 49.2
# HELP loadprobe_model_peak_throughput Goodput the fitted Universal Scalability Law predicts at its peak N*, in successful responses per second; absent without a measured κ.
# TYPE loadprobe_model_peak_throughput gauge
loadprobe_model_peak_throughput{probe="work"} 512
`
	noPeak := *fitted
	noPeak.Verdict = result.VerdictNoPeak
	for _, tc := range []struct {
		name  string
		model *result.Model
		want  string
	}{
		{"fitted", fitted, header + peak},
		{"no peak", &noPeak, header},
		{"too few levels", &result.Model{Verdict: result.VerdictTooFewLevels}, ""},
		{"phases: no model", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, src, _ := newTest(t)
			r := completedRun()
			r.Model = tc.model
			src.set(state.Probe{Probe: probeConfig("work", 0), Last: r})
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), modelFamilies...); err != nil {
				t.Error(err)
			}
			if problems, err := testutil.GatherAndLint(reg, modelFamilies...); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}
}
