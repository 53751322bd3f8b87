package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// run's table shows a flow's steps level by level; a single request's
// table has no such block.
func TestWriteFlowSteps(t *testing.T) {
	r := result.Result{Name: "shop", Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: []result.Step{{
		Level: 4, Attempts: 100, Responses: result.Codes{result.HTTPStatus(200): 100},
		Flow: []result.FlowFigures{
			{Name: "login", Attempts: 100, Latency: result.Latency{Mean: 0.002, P99: 0.004}, Responses: result.Codes{result.HTTPStatus(200): 100}},
			{Name: "item", Attempts: 100, ErrorRatio: 0.1, Latency: result.Latency{Mean: 0.001, P99: 0.003}, Responses: result.Codes{result.HTTPStatus(200): 90, result.HTTPStatus(401): 10}},
		},
	}}}
	var out bytes.Buffer
	p := compiledProbe(t, "http://127.0.0.1:8080/")
	writeTable(&out, p, r, "")
	for _, want := range []string{
		"flow steps:",
		"connections   step  attempts    mean     p99  error ratio          codes  errors",
		"4  login       100  2.00ms  4.00ms        0.00%        200:100       -",
		"4   item       100  1.00ms  3.00ms       10.00%  200:90 401:10       -",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	r.Steps[0].Flow = nil
	out.Reset()
	writeTable(&out, p, r, "")
	if strings.Contains(out.String(), "flow steps") {
		t.Errorf("a single request's table has a flow block:\n%s", out.String())
	}
}
