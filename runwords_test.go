package main

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// TestRunTableSpeaksWebSocket: a WebSocket probe's table counts sessions or
// messages per second, message replies and refused upgrades, never
// connections, rps or the 101 every reply counts as; the close codes of
// the sessions the server closed follow it.
func TestRunTableSpeaksWebSocket(t *testing.T) {
	step := func(level float64, codes result.Codes, closed int64) result.Step {
		s := result.Step{Level: level, Attempts: codes[result.HTTPStatus(101)] + closed, Responses: codes, Latency: result.Latency{Mean: 0.001, P99: 0.002}}
		if closed > 0 {
			s.Errors = map[string]int64{"closed": closed}
		}
		return s
	}
	tests := []struct {
		url   string
		mode  plan.Mode
		want  []string
		lacks []string
	}{
		{"ws://127.0.0.1:8080/ws-limited", plan.ModeConcurrency,
			[]string{"  sessions  msg/s", "refused upgrades", "403:3", "closed:7", "at 8 sessions", "close codes: 1013:7 (sessions the server closed"},
			[]string{"connections", "rps", "101:", "\n  codes"}},
		{"ws://127.0.0.1:8080/ws", plan.ModeRate,
			[]string{"  messages/s  msg/s", "at 8 messages/s"},
			[]string{"req/s", "rps", "101:"}},
		{"http://127.0.0.1:8080/work", plan.ModeConcurrency,
			[]string{"  connections  rps", "codes", "101:40", "at 8 connections"},
			[]string{"sessions", "msg/s", "refused upgrades"}},
	}
	for _, tt := range tests {
		p := compiledProbe(t, tt.url)
		r := result.Result{Name: "p", Mode: tt.mode, Ended: result.ResultCompleted, Steps: []result.Step{
			step(4, result.Codes{result.HTTPStatus(101): 40}, 0), step(8, result.Codes{result.HTTPStatus(101): 80, result.HTTPStatus(403): 3}, 7),
		}, Capacity: &result.Point{Level: 8, Throughput: 80}}
		closed := ""
		if p.Request.WebSocket() {
			closed = "1013:7"
		}
		var out strings.Builder
		writeTable(&out, p, r, closed)
		table, _, _ := strings.Cut(out.String(), "valid:") // the diagnosis is the result's own text
		testkit.Contains(t, tt.url+"'s table", table, tt.want...)
		testkit.Lacks(t, tt.url+"'s table", table, tt.lacks...)
	}
}

// TestCloseCodesReadTheRunsLiveCounts: the close codes line counts what the
// run's live metrics counted, for its probe alone, those without a label of
// their own as "other".
func TestCloseCodesReadTheRunsLiveCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	coll := collector.New(reg)
	ws, other := coll.Live("ws"), coll.Live("other")
	for _, code := range []int{1013, 1013, 1001, 2000} { // 2000: no registered range
		ws.(interface{ CloseCode(int) }).CloseCode(code)
	}
	other.(interface{ CloseCode(int) }).CloseCode(1011)
	if got := closeCodes(reg, "ws"); got != "1001:1 1013:2 other:1" {
		t.Errorf("close codes of ws: %q, want %q", got, "1001:1 1013:2 other:1")
	}
	if got := closeCodes(reg, "none"); got != "" {
		t.Errorf("close codes of a probe without any: %q, want none", got)
	}
}

// TestRunWritesConfiguredFiguresPlainly: a figure from the config reads as
// it was written, not in exponent form.
func TestRunWritesConfiguredFiguresPlainly(t *testing.T) {
	p := compiledProbe(t, "http://127.0.0.1:8080/work")
	p.Expect.MinCapacity = 1e6
	p.Rules.ErrorRatioBudget = 0.00001
	r := result.Result{Name: "p", Mode: plan.ModeRate, Ended: result.ResultCompleted,
		Steps:    []result.Step{{Level: 1e6, Attempts: 10, Responses: result.Codes{result.HTTPStatus(200): 10}}},
		Capacity: &result.Point{Level: 1e6, Throughput: 10}}
	var out strings.Builder
	writeTable(&out, p, r, "")
	testkit.Contains(t, "the table", out.String(), "expected at least 1000000/s: NOT met", "error ratio exceeds 0.00001", "at 1000000 req/s")
	testkit.Lacks(t, "the table", out.String(), "e+", "e-")
}

// compiledProbe is the default probe with a name, url and one level,
// compiled.
func compiledProbe(t *testing.T, url string) *plan.Probe {
	t.Helper()
	p := config.DefaultProbe
	p.Name, p.Request.URL, p.Load.Concurrency = "p", url, []int{1}
	compiled, err := config.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return compiled
}
