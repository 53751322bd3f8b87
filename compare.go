package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/loadprobe/loadprobe/internal/regularfile"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// maxResultsFile bounds a results file `compare` reads: a run's JSON is
// kilobytes, a daemon's results of many probes a few megabytes.
const maxResultsFile = 64 << 20

// compareFiles is `loadprobe compare A.json B.json`: the verdict on each
// probe of candidate (B) against its run in baseline (A), as a table or
// JSON (docs/compare.md, "Results run apart"). It exits 1 when a verdict
// is fail, 2 when a file cannot be read or the two share no probe.
func compareFiles(baseline, candidate string, rules plan.Compare, output string, stdout, stderr io.Writer) int {
	base, err := readResults(baseline)
	if err == nil {
		var cand []result.Result
		if cand, err = readResults(candidate); err == nil {
			return writeComparisons(base, cand, rules, output, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "loadprobe compare: %v\n", err)
	return 2
}

func writeComparisons(base, cand []result.Result, rules plan.Compare, output string, stdout, stderr io.Writer) int {
	type judged struct {
		Name    string          `json:"name"`
		Compare *result.Compare `json:"compare"`
	}
	var out []judged
	code := 0
	for _, b := range base {
		i := slices.IndexFunc(cand, func(c result.Result) bool { return c.Name == b.Name })
		if i < 0 {
			continue
		}
		v := analysis.Judge(b, cand[i], rules)
		if v.Verdict == result.VerdictFail {
			code = 1
		}
		out = append(out, judged{b.Name, v})
		if output == "table" {
			writeComparison(stdout, "probe "+b.Name, b, cand[i], v, rules)
		}
	}
	if len(out) == 0 {
		fmt.Fprintln(stderr, "loadprobe compare: the two files share no probe")
		return 2
	}
	if output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"probes": out}); err != nil {
			fmt.Fprintf(stderr, "loadprobe compare: %v\n", err)
			return 2
		}
	}
	return code
}

// writeComparison prints the verdict on a candidate, after its title, with
// the figures behind it.
func writeComparison(w io.Writer, title string, base, cand result.Result, v *result.Compare, rules plan.Compare) {
	wd := words{base.Words()}
	point := func(r result.Result) string {
		if r.Capacity == nil {
			return "none"
		}
		return fmt.Sprintf("%.1f/s at %s", r.Capacity.Throughput, wd.Level(r.Capacity.Level))
	}
	fmt.Fprintf(w, "%s: %s\n", title, v.Verdict)
	fmt.Fprintf(w, "  capacity  baseline %s, candidate %s\n", point(base), point(cand))
	if base.Capacity != nil && cand.Capacity != nil {
		fmt.Fprintf(w, "  ratio     %.3f [%.3f, %.3f] at %.0f%% confidence; fail below %.3f\n",
			v.CapacityRatio, v.Interval[0], v.Interval[1], 100*rules.Confidence, 1-rules.MaxLoss)
	}
	switch l, in := v.LatencyRatio, v.LatencyInterval; {
	case in != nil:
		fmt.Fprintf(w, "  p99       %.3f [%.3f, %.3f] of the baseline's at %s; fail above %.3f\n",
			*l, in[0], in[1], wd.Level(base.Capacity.Level), 1+rules.MaxLatencyGain)
	case l != nil:
		fmt.Fprintf(w, "  p99       %.2f× the baseline's at %s (no second's p99: not judged)\n", *l, wd.Level(base.Capacity.Level))
	}
	if v.Reason != "" {
		fmt.Fprintf(w, "  %s\n", v.Reason)
	}
}

// readResults reads the results in file: run --output=json's or
// /api/v1/results' {"probes": [...]}, or one result.
func readResults(file string) ([]result.Result, error) {
	data, err := regularfile.Read(file, maxResultsFile)
	if err != nil {
		return nil, err
	}
	var all struct {
		Probes []result.Result `json:"probes"`
	}
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if all.Probes != nil {
		return all.Probes, nil
	}
	var one result.Result
	if err := json.Unmarshal(data, &one); err != nil || one.Name == "" {
		return nil, fmt.Errorf("%s: neither results ({\"probes\": [...]}) nor a result", file)
	}
	return []result.Result{one}, nil
}
