package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// resultsFile writes results of the probes named, as run --output=json
// does, each with 10 whole seconds at its capacity level, 4 connections,
// of the goodput given, their p99 as 4 connections' would be, 10ms at
// 400/s (its seconds alternating 1% above and below).
func resultsFile(t *testing.T, name string, goodput map[string]float64) string {
	t.Helper()
	var probes []result.Result
	for probe, g := range goodput {
		p99 := 0.01 * 400 / g
		s := result.Step{Level: 4, Attempts: int64(10 * g), Goodput: g, Latency: result.Latency{P99: p99}}
		for i := range 10 {
			off := 1 + 0.01*float64(1-2*(i%2))
			s.PerSecond = append(s.PerSecond, result.Second{Second: i, Success: int64(g * off), P99: p99 / off})
		}
		probes = append(probes, result.Result{Name: probe, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted,
			Steps: []result.Step{s}, Capacity: &result.Point{Level: 4, Throughput: g}, Valid: true})
	}
	b, err := json.Marshal(map[string]any{"probes": probes})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), name)
	testkit.WriteFile(t, file, string(b))
	return file
}

// `loadprobe compare` judges each probe the two files share: a candidate
// that lost 10% fails (exit 1), one that kept its capacity passes (exit
// 0); files that share no probe, or are no results, are a usage error.
func TestCompareJudgesTwoResultsFiles(t *testing.T) {
	base := resultsFile(t, "base.json", map[string]float64{"work": 400, "noop": 2000})
	slower := resultsFile(t, "slower.json", map[string]float64{"work": 360, "noop": 2000})
	same := resultsFile(t, "same.json", map[string]float64{"work": 401})

	code, stdout, stderr := loadprobe(t, "compare", base, slower)
	if code != 1 {
		t.Errorf("a candidate 10%% slower: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	testkit.Contains(t, "the verdicts", stdout,
		"probe work: fail\n", "  capacity  baseline 400.0/s at 4 connections, candidate 360.0/s at 4 connections\n",
		"  ratio     0.900 [0.", "at 95% confidence; fail below 0.950",
		"  p99       1.111 [1.", "of the baseline's at 4 connections; fail above 1.100\n",
		"the candidate's capacity is below 95% of the baseline's at 95% confidence; the candidate's p99 is above 110% of the baseline's at 95% confidence",
		"probe noop: pass\n")

	code, stdout, stderr = loadprobe(t, "compare", "--output=json", base, same)
	if code != 0 {
		t.Errorf("a candidate as fast: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	var got struct {
		Probes []struct {
			Name    string         `json:"name"`
			Compare result.Compare `json:"compare"`
		} `json:"probes"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got.Probes) != 1 || got.Probes[0].Compare.Verdict != result.VerdictPass {
		t.Errorf("JSON verdicts %+v (%v), want work's pass alone\n%s", got, err, stdout)
	}

	other := resultsFile(t, "other.json", map[string]float64{"elsewhere": 1})
	if code, _, stderr := loadprobe(t, "compare", base, other); code != 2 {
		t.Errorf("no shared probe: exit %d, want 2\n%s", code, stderr)
	}
	junk := filepath.Join(t.TempDir(), "junk.json")
	testkit.WriteFile(t, junk, `[1, 2]`)
	if code, _, stderr := loadprobe(t, "compare", base, junk); code != 2 {
		t.Errorf("not results: exit %d, want 2\n%s", code, stderr)
	}
}
