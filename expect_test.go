package main

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// max_p99 and max_error_ratio judge the step capacity was read at, not the
// levels past it that a ramp runs into on purpose; the table says what each
// read and whether it held, and the exit code follows.
func TestExpectationsReadTheCapacityStep(t *testing.T) {
	r := result.Result{Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Capacity: &result.Point{Level: 4, Throughput: 400}}
	for _, s := range []struct {
		level, p99, errors float64
	}{{1, 0.010, 0}, {2, 0.011, 0}, {4, 0.030, 0.002}, {8, 0.900, 0.4}} {
		r.Steps = append(r.Steps, result.Step{Level: s.level, Attempts: 1000, Goodput: 100 * min(s.level, 4),
			Responses: result.Codes{result.HTTPStatus(200): 1000}, ErrorRatio: s.errors, Latency: result.Latency{P99: s.p99}})
	}
	ratio := func(x float64) *float64 { return &x }
	for _, tc := range []struct {
		name   string
		expect plan.Expect
		held   bool
		lines  []string
	}{
		{"within", plan.Expect{MinCapacity: 300, MaxP99: model.Duration(50 * time.Millisecond), MaxErrorRatio: ratio(0.01)}, true, []string{
			"expected at least 300/s: met",
			"expected p99 at most 50ms at capacity: 30.00ms, met",
			"expected an error ratio of at most 1.00% at capacity: 0.20%, met",
		}},
		{"p99 above", plan.Expect{MaxP99: model.Duration(20 * time.Millisecond)}, false, []string{
			"expected p99 at most 20ms at capacity: 30.00ms, NOT met",
		}},
		{"no failure allowed", plan.Expect{MaxErrorRatio: ratio(0)}, false, []string{
			"expected an error ratio of at most 0.00% at capacity: 0.20%, NOT met",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Probe{Name: "p", Load: plan.Load{Concurrency: []int{1, 2, 4, 8}}, Rules: plan.DefaultRules, Expect: tc.expect, Request: &plan.Request{URL: &url.URL{Scheme: "http", Host: "127.0.0.1"}}}
			if got := expectationsHold(p, r); got != tc.held {
				t.Errorf("expectations hold: %v, want %v", got, tc.held)
			}
			var b strings.Builder
			writeTable(&b, p, r, "")
			for _, line := range tc.lines {
				if !strings.Contains(b.String(), line) {
					t.Errorf("the table lacks %q:\n%s", line, b.String())
				}
			}
		})
	}
	t.Run("no capacity", func(t *testing.T) {
		none := r
		none.Capacity = nil
		p := &plan.Probe{Name: "p", Rules: plan.DefaultRules, Expect: plan.Expect{MaxP99: model.Duration(time.Second)}}
		if expectationsHold(p, none) {
			t.Error("max_p99 holds without a capacity to read it at")
		}
	})
}
