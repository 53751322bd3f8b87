package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

func TestGuardSeries(t *testing.T) {
	reg, _, c := newTest(t)
	p := probeConfig("work", 0)
	limit := 5.0
	p.Guard = plan.Guard{ErrorRatio: 0.5, Prometheus: &plan.PrometheusGuard{Queries: []plan.GuardQuery{{Name: "target_5xx", Max: &limit}}}}
	c.DeclareGuards(p)
	const declared = `
# HELP loadprobe_guard_breaches_total Evaluations of the guard outside its limits: windows over a live guard's limit, query results outside [min, max].
# TYPE loadprobe_guard_breaches_total counter
loadprobe_guard_breaches_total{guard="error_ratio",probe="work"} 0
loadprobe_guard_breaches_total{guard="target_5xx",probe="work"} 0
# HELP loadprobe_guard_stopped_run_timestamp_seconds The start of the probe's last run that a guard of this replica stopped, in Unix seconds (a fleet's run: its aligned start); 0 before any. The fleet's other replicas read it to stop that run too.
# TYPE loadprobe_guard_stopped_run_timestamp_seconds gauge
loadprobe_guard_stopped_run_timestamp_seconds{probe="work"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(declared), "loadprobe_guard_breaches_total", "loadprobe_guard_stopped_run_timestamp_seconds"); err != nil {
		t.Errorf("before any evaluation: %v", err)
	}
	gl := c.Live("work").(live.Guards)
	gl.Guard("target_5xx", 3, false)
	gl.Guard("target_5xx", 100, true)
	gl.GuardError("target_5xx")
	gl.Guard(plan.GuardErrorRatio, 0.25, false)
	gl.Stopped(time.Date(2026, 12, 6, 3, 0, 30, 500e6, time.UTC))
	const want = `
# HELP loadprobe_guard_breaches_total Evaluations of the guard outside its limits: windows over a live guard's limit, query results outside [min, max].
# TYPE loadprobe_guard_breaches_total counter
loadprobe_guard_breaches_total{guard="error_ratio",probe="work"} 0
loadprobe_guard_breaches_total{guard="target_5xx",probe="work"} 1
# HELP loadprobe_guard_errors_total Evaluations of a Prometheus guard that gave no value: the query failed, timed out or returned no sample.
# TYPE loadprobe_guard_errors_total counter
loadprobe_guard_errors_total{guard="error_ratio",probe="work"} 0
loadprobe_guard_errors_total{guard="target_5xx",probe="work"} 1
# HELP loadprobe_guard_stopped_run_timestamp_seconds The start of the probe's last run that a guard of this replica stopped, in Unix seconds (a fleet's run: its aligned start); 0 before any. The fleet's other replicas read it to stop that run too.
# TYPE loadprobe_guard_stopped_run_timestamp_seconds gauge
loadprobe_guard_stopped_run_timestamp_seconds{probe="work"} 1.7965260305e+09
# HELP loadprobe_guard_value The guard's last evaluated value: a live guard's window error ratio or latency quantile in seconds, a Prometheus guard's query result.
# TYPE loadprobe_guard_value gauge
loadprobe_guard_value{guard="error_ratio",probe="work"} 0.25
loadprobe_guard_value{guard="target_5xx",probe="work"} 100
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadprobe_guard_value", "loadprobe_guard_breaches_total", "loadprobe_guard_errors_total", "loadprobe_guard_stopped_run_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	c.Forget("work")
	if n, _ := testutil.GatherAndCount(reg, "loadprobe_guard_value", "loadprobe_guard_breaches_total", "loadprobe_guard_stopped_run_timestamp_seconds"); n != 0 {
		t.Errorf("%d guard series of a forgotten probe", n)
	}
}

func TestCutStepHasNoStepSeries(t *testing.T) {
	reg, src, _ := newTest(t)
	r := completedRun()
	r.Ended = result.ResultAborted
	cut := step(8, 100)
	cut.Cut = true
	r.Steps = append(r.Steps, cut)
	src.set(state.Probe{Probe: probeConfig("work", 0), Last: r})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stepsHeader+stepSeries("4", "500", "510")+stepSeries("0.5", "40", "50")), resultFamilies[:9]...); err != nil {
		t.Errorf("the cut step at level 8 is exported as a level's figures: %v", err)
	}
}
