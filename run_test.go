package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/realpart"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// rampConfig is a short /work ramp against target, expecting minCapacity.
// Its knee rule takes 80% of the peak, not the default 95%: with 95%, a run
// on a 2-core VM found no knee, as level 8 alone reached it. That VM stalls
// for 100 ms and more now and then, which takes 10% from a 1 s step. Level
// 2 does half of level 4's goodput, far under either rule.
func rampConfig(t *testing.T, target string, minCapacity int) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "%s/work"}
    load: {concurrency: [1, 2, 4, 8], step_duration: 1s}
    rules: {knee_fraction: 0.8}
    expect: {min_capacity: %d}
  - name: shed
    request: {url: "%s/shed"}
    load: {concurrency: [8, 16], step_duration: 500ms}
`, target, minCapacity, target))
	return file
}

// guardedConfig is a ramp on answers that all fail, which its live guard
// stops in its first window.
func guardedConfig(t *testing.T, target string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "guarded.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: failing
    request: {url: "%s/status?code=500"}
    load: {concurrency: [1, 2], step_duration: 3s}
    guard: {window: 500ms, error_ratio: 0.5}
`, target))
	return file
}

// workTarget has its knee at 4 connections. A request's round trip adds
// ~0.4ms to its work: with 10ms of work that made level 4's goodput 94.9%
// of level 8's in a clean CI run, under the default knee rule's 95%; with
// 20ms it is ~97.5%.
func workTarget(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(target.New(target.Options{Workers: 4, WorkTime: 20 * time.Millisecond}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRunPrintsTheRampTable(t *testing.T) {
	file := rampConfig(t, workTarget(t), 150)
	code, stdout, stderr := loadprobe(t, "run", "--config.file="+file, "--probe=work")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (capacity above 150/s)\n%s\n%s", code, stdout, stderr)
	}
	testkit.Contains(t, "the table", stdout,
		"probe work: concurrency ramp, completed",
		"connections", "goodput", "p99", "in-flight", "load held", "gen cpu",
		"connections (the highest goodput within the budgets",
		"knee            4 connections",
		"latency budget  not reached up to 8 connections",
		"first failure   not reached up to 8 connections",
		"expected at least 150/s: met",
		"overload: graceful (goodput past capacity kept",
		"; recovered in ",
		"valid: yes",
		"model: no fit (too_few_levels: fewer than 5 levels",
		"throughput stopped improving at 4 connections",
	)
	testkit.Lacks(t, "the table of one probe", stdout, "probe shed")
	testkit.Contains(t, "the progress on stderr", stderr, "work: step 1/4 (level 1)", "work: step 4/4 (level 8)")
}

// The table shows p50, p90 and the rule's p99, as wrk's --latency does. A
// step without a successful response has no latency to show: the table says
// "-", where 0.00ms would read as the quickest level of the ramp.
func TestTableShowsNoLatencyWithoutSuccess(t *testing.T) {
	lq, _ := analysis.LatencyRule(plan.DefaultRules)
	r := result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
		{Level: 1, Attempts: 10, Responses: result.Codes{result.HTTPStatus(200): 10}, Latency: result.Latency{Mean: 0.005, P50: 0.004, P90: 0.006, P99: 0.007}},
		{Level: 2, Attempts: 10, Errors: map[string]int64{"refused": 10}, ErrorRatio: 1},
	}}
	var b strings.Builder
	writeSteps(&b, r, lq, words{r.Words()})
	rows := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(rows) != 3 {
		t.Fatalf("%d rows, want a header and two steps:\n%s", len(rows), b.String())
	}
	if head := strings.Fields(rows[0]); len(head) < 7 || !slices.Equal(head[3:7], []string{"mean", "p50", "p90", lq.Label}) {
		t.Errorf("header %q: want mean, p50, p90 and %s after goodput", rows[0], lq.Label)
	}
	for i, want := range [][]string{{"5.00ms", "4.00ms", "6.00ms", "7.00ms"}, {"-", "-", "-", "-"}} {
		f := strings.Fields(rows[i+1])
		if len(f) < 7 || !slices.Equal(f[3:7], want) {
			t.Errorf("row %q: want mean, p50, p90 and %s %v", rows[i+1], lq.Label, want)
		}
	}
}

func TestRunJSON(t *testing.T) {
	file := rampConfig(t, workTarget(t), 150)
	code, stdout, stderr := loadprobe(t, "run", "--config.file="+file, "--output=json")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, stderr)
	}
	var out struct {
		Probes []map[string]json.RawMessage `json:"probes"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("stdout is not the result JSON: %v\n%s", err, stdout)
	}
	if len(out.Probes) != 2 {
		t.Fatalf("%d probes in the JSON, want both", len(out.Probes))
	}
	for _, key := range []string{"name", "mode", "result", "started", "duration_seconds", "steps",
		"peak_throughput", "breaking_points", "capacity", "model", "valid", "diagnosis"} {
		if _, ok := out.Probes[0][key]; !ok {
			t.Errorf("result JSON lacks %q", key)
		}
	}
	var shed result.Result
	raw, _ := json.Marshal(out.Probes[1])
	if err := json.Unmarshal(raw, &shed); err != nil {
		t.Fatal(err)
	}
	if ff := shed.BreakingPoints.FirstFailure; ff == nil || ff.Level != 16 || shed.Steps[1].Responses[result.HTTPStatus(503)] == 0 {
		t.Errorf("shed: first failure %+v, responses %v; want 503s from 16 connections", ff, shed.Steps[len(shed.Steps)-1].Responses)
	}
	var model bytes.Buffer
	if err := json.Compact(&model, out.Probes[0]["model"]); err != nil || model.String() != `{"verdict":"too_few_levels"}` {
		t.Errorf("work model %s (%v): a ramp of 4 levels gets a verdict and no coefficients", out.Probes[0]["model"], err)
	}
	var bp map[string]json.RawMessage
	if err := json.Unmarshal(out.Probes[0]["breaking_points"], &bp); err != nil {
		t.Fatal(err)
	}
	if string(bp["first_failure"]) != "null" || string(bp["knee"]) == "null" {
		t.Errorf("work breaking points %s, want a knee and first_failure null", out.Probes[0]["breaking_points"])
	}
}

func TestRunExitCodes(t *testing.T) {
	target := workTarget(t)
	bad := filepath.Join(t.TempDir(), "bad.yml")
	testkit.WriteFile(t, bad, testkit.BadConfig)
	tests := []struct {
		name string
		args []string
		want int
		says string
	}{
		{"capacity below expectation", []string{"--config.file=" + rampConfig(t, target, 1000), "--probe=work"}, 1, "expected at least 1000/s: NOT met"},
		{"bad config", []string{"--config.file=" + bad}, 2, "bad.yml:4:"},
		{"stopped by a guard", []string{"--config.file=" + guardedConfig(t, target)}, 1, "live guard error_ratio at 1 stopped the load at 1 connection"},
		{"the cut step marked", []string{"--config.file=" + guardedConfig(t, target)}, 1, " 1 (cut)  "},
		{"unknown probe", []string{"--config.file=" + rampConfig(t, target, 0), "--probe=nope"}, 2, `no probe named "nope"`},
		{"bad output", []string{"--config.file=" + rampConfig(t, target, 0), "--output=xml"}, 2, "xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := loadprobe(t, append([]string{"run"}, tt.args...)...)
			if code != tt.want {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tt.want, stdout, stderr)
			}
			testkit.Contains(t, "the output", stdout+stderr, tt.says)
		})
	}
}

// TestDemo is the README's first command: within 30 s of `loadprobe demo`
// the breaking points are on the status page and in /metrics, and Ctrl-C
// stops it cleanly.
func TestDemo(t *testing.T) {
	cmd := exec.Command(binary, "demo", "--web.listen-address=127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	base, hint := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`status page:\s+(http://\S+)/`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				base <- m[1]
			}
			if strings.HasPrefix(sc.Text(), "Headroom and the bottleneck:") {
				hint <- sc.Text()
			}
		}
	}()
	var url string
	select {
	case url = <-base:
	case <-time.After(15 * time.Second):
		t.Fatalf("demo printed no status page URL\n%s", stderr.String())
	}

	get := func(path string) string {
		resp, err := http.Get(url + path)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// The demo's ramps run one at a time (max_parallel_runs: 1, so that no
	// run measures another's load), in no set order: work's and
	// grpc-work's first runs may follow the other six ramps, about 6s each.
	deadline := time.Now().Add(90 * time.Second)
	for _, probe := range []string{"work", "grpc-work"} {
		for !strings.Contains(get("/metrics"), `loadprobe_breaking_point_level{probe="`+probe+`",rule="knee"}`) {
			if time.Now().After(deadline) {
				t.Fatalf("no knee of the %s probe in /metrics within 90s\n%s", probe, stderr.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	testkit.Contains(t, "the gRPC probe's responses", get("/metrics"), `loadprobe_responses_total{code="OK",probe="grpc-work"`)
	// Without a Prometheus it says how to see the headroom.
	select {
	case line := <-hint:
		testkit.Contains(t, "the demo's hint", line, "--demo.prometheus-url=URL")
	default:
		t.Error("the demo did not say how to see headroom and the bottleneck")
	}
	testkit.Contains(t, "the status page", get("/"), `<svg class="ramp"`, "connections (")
	t.Run("promtool check metrics", func(t *testing.T) { promtoolCheckMetrics(t, get("/metrics")) })

	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("demo exited with %v after Ctrl-C\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Error("demo did not stop within 5s of Ctrl-C")
	}
}

// promtoolCheckMetrics lints an exposition the way Prometheus's maintainers
// do: every family, the per-step summary included, must pass clean.
// contractLint is the one objection of promtool's that the contract
// overrules: the native histogram's name says what it is beside the
// summary of the same latencies, which has the plain name
// (docs/metrics.md, "Per step").
const contractLint = "loadprobe_step_latency_histogram_seconds metric name should not include type 'histogram'"

func promtoolCheckMetrics(t *testing.T, exposition string) {
	t.Helper()
	cmd := exec.Command(realpart.Find(t, "promtool", "apt-get install --no-install-recommends prometheus"), "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && line != contractLint {
			problems = append(problems, line)
		}
	}
	if len(problems) > 0 || err != nil && !strings.Contains(string(out), contractLint) {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	if !strings.Contains(exposition, "loadprobe_step_latency_seconds_count{") {
		t.Errorf("the scrape has no step latency summary to check:\n%s", exposition)
	}
}

// With telemetry, run's table shows each step's resources, the bottleneck
// or why there is none, and the headroom over the live peak.
func TestRunTableShowsTelemetry(t *testing.T) {
	prom := testkit.FakePrometheus(t, map[string][]testkit.Series{
		"cpu":     {func(time.Time) (float64, bool) { return 0.3, true }},
		"traffic": {func(time.Time) (float64, bool) { return 40, true }},
	}, nil)
	file := filepath.Join(t.TempDir(), "telemetry.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "%s/work"}
    load: {concurrency: [1, 2, 4, 8, 16], step_duration: 500ms}
    telemetry:
      prometheus: {url: "%s"}
      traffic: traffic
      saturation: [{name: cpu, query: cpu, max: 0.9}]
`, workTarget(t), prom.URL))
	code, stdout, stderr := loadprobe(t, "run", "--config.file="+file)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	testkit.Contains(t, "the table", stdout,
		"gen cpu  cpu\n",
		"%  0.3\n", // the generator CPU column, then the resource
		"over a live peak of 40.0/s in the last 7d; 40.0/s now)",
		// The knee lies at the pool's 4 or past it: at 4 a step of 500ms
		// counts 23 or 24 requests of 21ms a connection, 184/s or 192/s,
		// and at 184 it is not yet 95% of the peak (CI, this stop). A
		// level past 8 keeps the knee from falling on the last one.
		"no declared resource (cpu) reached its limit at or below the knee (",
		"connections): none explains it",
	)
}

// A probe that compares runs its levels on both targets in turn, prints
// the candidate's rows and the verdict, and exits 1 when the candidate
// lost capacity: a pool of 3 against a pool of 4.
func TestRunComparesACandidate(t *testing.T) {
	base := workTarget(t)
	smaller := httptest.NewServer(target.New(target.Options{Workers: 3, WorkTime: 20 * time.Millisecond}))
	t.Cleanup(smaller.Close)
	file := filepath.Join(t.TempDir(), "compare.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "%s/work"}
    load: {concurrency: [4], step_duration: 3s}
    compare: {candidate: "%s"}
`, base, smaller.URL))
	code, stdout, stderr := loadprobe(t, "run", "--config.file="+file)
	if code != 1 {
		t.Errorf("a candidate with 3 workers of 4: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	host := strings.TrimPrefix(smaller.URL, "http://")
	testkit.Contains(t, "the table", stdout,
		"candidate "+host+", at the same levels, in turn with the baseline:\n",
		"candidate "+host+": fail\n",
		"  ratio     0.7",
		"compared with the candidate "+host+": fail, its capacity 0.7")
}
