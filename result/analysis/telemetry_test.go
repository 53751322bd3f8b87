package analysis

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// pool is a ramp against a pool of 12 workers: goodput rises with the
// level up to 12 and holds there; its workers' saturation is the level
// over 12, at most 1.
func pool() (*result.Result, []map[string]float64) {
	r := &result.Result{Mode: plan.ModeConcurrency}
	var sat []map[string]float64
	for _, level := range []float64{1, 2, 4, 8, 12, 16} {
		g := int64(50 * min(level, 12))
		r.Steps = append(r.Steps, mk(level, []int64{g, g}, []int64{0, 0}, "503", ms(20)))
		sat = append(sat, map[string]float64{"cpu": 0.05 * level, "workers": min(level/12, 1)})
	}
	Analyze(r, plan.DefaultRules)
	return r, sat
}

var (
	cpu     = plan.Resource{Name: "cpu", Query: "cpu", Max: 0.9}
	workers = plan.Resource{Name: "workers", Query: "workers", Max: 1}
)

// The bottleneck is the first resource at its limit, by level, up to the
// knee: the workers at 12 connections, not the CPU, which reaches its
// limit only past the knee.
func TestBottleneckAtTheKnee(t *testing.T) {
	t.Parallel()
	r, sat := pool()
	Explain(r, Readings{Resources: []plan.Resource{cpu, workers}, Saturation: sat})
	if b := r.Bottleneck; b == nil || *b != (result.Bottleneck{Resource: "workers", Level: 12, Value: 1}) {
		t.Errorf("bottleneck %+v, want workers at 12 reading 1", b)
	}
	if got := r.Steps[3].Saturation; got["workers"] != 8.0/12 || got["cpu"] != 0.4 {
		t.Errorf("the step at 8 connections read %v, want workers 0.67 and cpu 0.4", got)
	}
	checkDiagnosis(t, r.Diagnosis, []string{
		"bottleneck: workers at its limit from 12 connections (1, max 1), the first declared resource to reach it at or below the knee (12 connections)",
	}, []string{"headroom"})

	// Limits no level reached: none explains the knee; the nearest is named.
	r, sat = pool()
	Explain(r, Readings{Resources: []plan.Resource{cpu, {Name: "workers", Query: "workers", Max: 2}}, Saturation: sat})
	if r.Bottleneck != nil {
		t.Errorf("bottleneck %+v, want none", r.Bottleneck)
	}
	checkDiagnosis(t, r.Diagnosis, []string{
		"no declared resource (cpu, workers) reached its limit at or below the knee (12 connections): none explains it; the nearest, cpu, read 0.6 of max 0.9 at 12 connections",
	}, []string{"bottleneck:"})

	// Without a knee the first failure bounds the search.
	r = &result.Result{Mode: plan.ModeConcurrency}
	for i, level := range []float64{1, 2, 4} {
		r.Steps = append(r.Steps, mk(level, []int64{100 * int64(level)}, []int64{int64(i / 2)}, "503", ms(5)))
	}
	Analyze(r, plan.DefaultRules)
	Explain(r, Readings{Resources: []plan.Resource{workers}, Saturation: []map[string]float64{{"workers": 0.2}, {"workers": 0.5}, {"workers": 1.2}}})
	if b := r.Bottleneck; r.BreakingPoints.Knee != nil || b == nil || b.Level != 4 {
		t.Errorf("knee %+v, bottleneck %+v: want no knee and workers at 4, the first failure", r.BreakingPoints.Knee, b)
	}
	checkDiagnosis(t, r.Diagnosis, []string{"at or below the first failure (4 connections)"}, nil)
}

// Headroom is capacity over the live peak, and says when half again the
// peak would not fit, or why it is unknown.
func TestHeadroom(t *testing.T) {
	t.Parallel()
	window := model.Duration(7 * 24 * time.Hour)
	for _, tc := range []struct {
		name  string
		live  *result.Headroom
		err   error
		ratio float64
		line  string
	}{
		{"ample", &result.Headroom{LivePeak: 200, LiveNow: 120}, nil, 3,
			"headroom 3×: capacity 600/s against a live peak of 200/s over the last 7d (120/s now)"},
		{"low", &result.Headroom{LivePeak: 480, LiveNow: 300}, nil, 1.25,
			"headroom 1.25×: capacity 600/s against a live peak of 480/s over the last 7d (300/s now): below 1.5×, half again the live peak would not fit"},
		{"exceeded", &result.Headroom{LivePeak: 800}, nil, 0.75, ": the live peak is above the capacity measured"},
		{"no traffic", &result.Headroom{}, nil, 0, "headroom unknown: no live traffic over the last 7d to set the capacity against"},
		{"query failed", nil, errors.New("bad_data: parse error"), 0, "headroom unknown: the traffic query: bad_data: parse error"},
	} {
		r, _ := pool()
		Explain(r, Readings{Traffic: true, Live: tc.live, TrafficErr: tc.err, Window: window})
		if h := r.Headroom; tc.ratio == 0 && h != nil || tc.ratio > 0 && (h == nil || !approx(h.Ratio, tc.ratio, 1e-9) || h.Capacity != 600 || h.Window != "7d") {
			t.Errorf("%s: headroom %+v, want a ratio of %v", tc.name, h, tc.ratio)
		}
		checkDiagnosis(t, r.Diagnosis, []string{tc.line}, nil)
	}
}
