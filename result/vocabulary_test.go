package result

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
)

func TestFormatLevel(t *testing.T) {
	for level, want := range map[float64]string{1: "1", 1024: "1024", 0.5: "0.5", 2.25: "2.25", 100000: "100000", 1e7: "10000000"} {
		if got := plan.FormatLevel(level); got != want {
			t.Errorf("plan.FormatLevel(%v) = %q, want %q", level, got, want)
		}
	}
}

// A step is named in its protocol's words: an HTTP probe's connections and
// req/s, a gRPC probe's streams and calls/s, a WebSocket probe's sessions
// and messages/s.
func TestLevelText(t *testing.T) {
	for _, c := range []struct {
		mode     plan.Mode
		protocol plan.Protocol
		s        Step
		want     string
	}{
		{plan.ModeConcurrency, plan.ProtocolHTTP, Step{Level: 1}, "1 connection"},
		{plan.ModeConcurrency, plan.ProtocolHTTP, Step{Level: 512}, "512 connections"},
		{plan.ModeRate, plan.ProtocolHTTP, Step{Level: 1}, "1 req/s"},
		{plan.ModeRate, "", Step{Level: 2.5}, "2.5 req/s"},
		{plan.ModePhases, plan.ProtocolHTTP, Step{Level: 5, Name: "sustained"}, `phase "sustained" (5 req/s)`},
		{plan.ModePhases, plan.ProtocolHTTP, Step{Level: 5}, "the phase at 5 req/s"},
		{plan.ModeConcurrency, plan.ProtocolGRPC, Step{Level: 1}, "1 stream"},
		{plan.ModeConcurrency, plan.ProtocolGRPC, Step{Level: 8}, "8 streams"},
		{plan.ModeRate, plan.ProtocolGRPC, Step{Level: 300}, "300 calls/s"},
		{plan.ModeConcurrency, plan.ProtocolWebSocket, Step{Level: 1}, "1 session"},
		{plan.ModeConcurrency, plan.ProtocolWebSocket, Step{Level: 9}, "9 sessions"},
		{plan.ModePhases, plan.ProtocolWebSocket, Step{Level: 50, Name: "burst"}, `phase "burst" (50 messages/s)`},
	} {
		if got := StepText(plan.Words{Mode: c.mode, Protocol: c.protocol}, c.s); got != c.want {
			t.Errorf("%s %s: StepText(%v) = %q, want %q", c.protocol, c.mode, c.s.Level, got, c.want)
		}
	}
}

// The JSON keeps the spelling of docs/results.md: typed values marshal to the same
// strings, status codes to the same object keys.
func TestVocabularyJSON(t *testing.T) {
	b, err := json.Marshal(Result{Mode: plan.ModeConcurrency, Ended: ResultAborted, Steps: []Step{{Responses: Codes{HTTPStatus(200): 3, HTTPStatus(503): 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"mode":"concurrency"`, `"result":"aborted"`, `"responses":{"200":3,"503":1}`, `"error_latency_seconds":null`} {
		if !json.Valid(b) || !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || back.Steps[0].Responses[HTTPStatus(503)] != 1 {
		t.Errorf("round trip: %v, %+v", err, back.Steps)
	}
}

func TestRuleText(t *testing.T) {
	want := map[Rule]string{RuleKnee: "knee", RuleLatencyBudget: "latency budget", RuleFirstFailure: "first failure"}
	for _, r := range Rules {
		if r.Text() != want[r] {
			t.Errorf("%s.Text() = %q, want %q", r, r.Text(), want[r])
		}
	}
}
