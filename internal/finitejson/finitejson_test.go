package finitejson_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/finitejson"
	"github.com/loadprobe/loadprobe/result"
)

// fullResult fills every kind of field a result has: floats in structs,
// pointers, slices, arrays and maps, omitempty and omitzero fields, a
// Marshaler of its own (the model, times).
func fullResult(x float64) result.Result {
	lat := result.Latency{Mean: 0.01, P50: x, P90: 0.012, P95: 0.013, P99: 0.015, P999: 0.02, Max: 0.03}
	step := result.Step{
		Level: 4, DurationSeconds: 2, Attempts: 100, Throughput: 50, Goodput: x, Latency: lat, ErrorLatency: &lat,
		Responses: result.Codes{result.HTTPStatus(200): 90, result.HTTPStatus(503): 10}, HTTPErrors: result.Codes{result.HTTPStatus(503): 10}, Errors: map[string]int64{"timeout": 0},
		InFlight: 0.5, LoadHeldRatio: 1, PerSecond: []result.Second{{Second: 0, Success: 45, Failure: 5}},
		Started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Search: "grow",
		Flow: []result.FlowFigures{{Name: "login", Attempts: 100, ErrorRatio: x, Latency: lat}},
	}
	point := &result.Point{Level: 4, Throughput: x, Bracket: [2]float64{2, 4}}
	return result.Result{
		Name: "work", Mode: "concurrency", Ended: result.ResultCompleted, Started: step.Started, DurationSeconds: 5,
		Steps: []result.Step{step, {Level: 8}}, PeakThroughput: x,
		BreakingPoints: result.BreakingPoints{Knee: point}, Capacity: &result.Point{Level: 4, Throughput: 50},
		Model: &result.Model{Verdict: result.VerdictFitted, Sigma: x, Kappa: 0.001, Lambda: 14},
		Valid: true, Diagnosis: []string{"a <sentence> & more"},
		Abort: &result.Abort{By: "live", Guard: "g", Value: x},
		Fleet: &result.Fleet{Shards: 3, Steps: []result.Step{step}, MissingShards: []int{}, PeakThroughput: x},
	}
}

// With every figure finite, Marshal writes what encoding/json writes,
// byte for byte.
func TestMarshalIsEncodingJSONForFiniteValues(t *testing.T) {
	r := fullResult(0.25)
	want, err := json.Marshal(struct {
		Probes []result.Result `json:"probes"`
	}{[]result.Result{r, {Name: "empty"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := finitejson.Marshal(struct {
		Probes []result.Result `json:"probes"`
	}{[]result.Result{r, {Name: "empty"}}})
	if err != nil || string(got) != string(want) {
		t.Errorf("Marshal = %v\n%s\nwant encoding/json's\n%s", err, got, want)
	}
}

// NaN and ±Inf, which encoding/json refuses, are null wherever they are
// (a struct, a pointer, a slice, an array, the model), and the document
// reads back.
func TestMarshalWritesNonFiniteAsNull(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := fullResult(x)
		if _, err := json.Marshal(r); err == nil {
			t.Fatalf("encoding/json wrote %g: the test has no value it refuses", x)
		}
		got, err := finitejson.Marshal(r)
		if err != nil {
			t.Fatalf("%g: %v", x, err)
		}
		var back result.Result
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%g: the document does not read back: %v\n%s", x, err, got)
		}
		var tree struct {
			PeakThroughput *float64 `json:"peak_throughput"`
			Steps          []struct {
				Goodput *float64 `json:"goodput"`
				Latency struct {
					P50 *float64 `json:"p50"`
					P99 *float64 `json:"p99"`
				} `json:"latency_seconds"`
			} `json:"steps"`
			Model map[string]any `json:"model"`
		}
		if err := json.Unmarshal(got, &tree); err != nil {
			t.Fatal(err)
		}
		if tree.PeakThroughput != nil || tree.Steps[0].Goodput != nil || tree.Steps[0].Latency.P50 != nil {
			t.Errorf("%g: peak %v, goodput %v, p50 %v; want null", x, tree.PeakThroughput, tree.Steps[0].Goodput, tree.Steps[0].Latency.P50)
		}
		if p99 := tree.Steps[0].Latency.P99; p99 == nil || *p99 != 0.015 {
			t.Errorf("%g: p99 %v, want the finite 0.015 kept", x, p99)
		}
		if s, ok := tree.Model["sigma"]; !ok || s != nil {
			t.Errorf("%g: model sigma %v (present %v), want null", x, s, ok)
		}
		if back.Capacity == nil || back.Capacity.Throughput != 50 || back.Steps[0].Latency.P99 != 0.015 {
			t.Errorf("%g: read back capacity %+v, p99 %g; want the finite figures", x, back.Capacity, back.Steps[0].Latency.P99)
		}
	}
}

type inner struct {
	A float64 `json:"a"`
}

type withEmbedded struct {
	inner
	*Pointed
	B float64            `json:"b,omitempty"`
	C [2]float64         `json:"c,omitzero"`
	M map[string]float64 `json:"m"`
	I any                `json:"i"`
	D float64            `json:"-"`
	e float64
}

type Pointed struct {
	P float64
}

// Embedded structs, omitempty, omitzero, maps, interfaces, "-" and
// unexported fields are written as encoding/json writes them.
func TestMarshalFollowsEncodingJSONsRules(t *testing.T) {
	for _, v := range []withEmbedded{
		{},
		{inner: inner{A: 1}, Pointed: &Pointed{P: 2}, B: 3, C: [2]float64{4, 5}, M: map[string]float64{"z": 1, "a": 2}, I: 6.5, D: 7, e: 8},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := finitejson.Marshal(v); err != nil || string(got) != string(want) {
			t.Errorf("finitejson.Marshal(%+v) = %s, %v; want %s", v, got, err, want)
		}
	}
	got, err := finitejson.Marshal(withEmbedded{inner: inner{A: math.NaN()}, M: map[string]float64{"x": math.Inf(1)}, I: math.NaN()})
	if want := `{"a":null,"m":{"x":null},"i":null}`; err != nil || string(got) != want {
		t.Errorf("Marshal = %s, %v; want %s", got, err, want)
	}
}
