package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule"
)

// The configs name targetURL; startDaemon and td.write replace it with the
// address of the test's own demo target, so every run the daemon starts
// goes there, and runs are short.
const targetURL = "http://127.0.0.1:8080"

type testDaemon struct {
	*Daemon
	url     string
	file    string
	target  string // base URL of the test's demo target
	hup     chan os.Signal
	cancel  context.CancelFunc
	stopped chan error
}

// daemonOptions are the knobs a test turns on a daemon.
type daemonOptions struct {
	lifecycle bool         // --web.enable-lifecycle
	storage   string       // --storage.path
	target    string       // base URL replacing targetURL; "" starts a fresh demo target
	paused    bool         // --paused
	logger    *slog.Logger // nil: logs nothing
	fleet     FleetOptions
}

// startDaemon runs a daemon in-process on a free loopback port with config
// as its config file, against a demo target of its own, and stops it when
// the test ends.
func startDaemon(t *testing.T, config string, lifecycle bool) *testDaemon {
	t.Helper()
	return startDaemonWith(t, config, daemonOptions{lifecycle: lifecycle})
}

// demoTarget serves a fresh demo target (4 workers, 10ms of work) on
// loopback until the test ends, and returns its base URL.
func demoTarget(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(target.New(target.Options{}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func startDaemonWith(t *testing.T, config string, o daemonOptions) *testDaemon {
	t.Helper()
	if o.target == "" {
		o.target = demoTarget(t)
	}
	if o.logger == nil {
		o.logger = promslog.NewNopLogger()
	}
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, strings.ReplaceAll(config, targetURL, o.target))
	addrs, webConfig, systemd := []string{"127.0.0.1:0"}, "", false
	hup := make(chan os.Signal, 1)
	d, err := New(Options{
		ConfigFile:      file,
		Web:             &web.FlagConfig{WebListenAddresses: &addrs, WebConfigFile: &webConfig, WebSystemdSocket: &systemd},
		EnableLifecycle: o.lifecycle,
		StoragePath:     o.storage,
		Paused:          o.paused,
		Fleet:           o.fleet,
		Logger:          o.logger,
		Hup:             hup,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDaemon{Daemon: d, file: file, target: o.target, hup: hup, cancel: cancel, stopped: make(chan error, 1)}
	go func() { td.stopped <- d.Run(ctx) }()
	select {
	case <-d.Started():
	case err := <-td.stopped:
		cancel()
		t.Fatalf("daemon did not start: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("daemon did not start within 10s")
	}
	td.url = "http://" + d.Addrs()[0].String()
	t.Cleanup(func() { td.stop(t) })
	return td
}

// stop shuts the daemon down and waits for Run to return; a second call
// does nothing.
func (td *testDaemon) stop(t *testing.T) {
	t.Helper()
	td.cancel()
	if td.stopped == nil {
		return
	}
	select {
	case err := <-td.stopped:
		if err != nil {
			t.Errorf("Run returned %v after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("daemon did not stop within 5s of cancel")
	}
	td.stopped = nil
}

// write replaces the daemon's config file, with targetURL standing for the
// test's demo target.
func (td *testDaemon) write(t *testing.T, config string) {
	t.Helper()
	testkit.WriteFile(t, td.file, strings.ReplaceAll(config, targetURL, td.target))
}

func (td *testDaemon) do(t *testing.T, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, td.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func (td *testDaemon) get(t *testing.T, path string) string {
	t.Helper()
	code, body := td.do(t, http.MethodGet, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return body
}

// reloadGauge reads loadprobe_config_last_reload_successful from /metrics.
func (td *testDaemon) reloadGauge(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^loadprobe_config_last_reload_successful (\S+)$`).FindStringSubmatch(td.get(t, "/metrics"))
	if m == nil {
		t.Fatal("/metrics has no loadprobe_config_last_reload_successful")
	}
	return m[1]
}

func TestMetricsEndpoint(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, false)
	body := td.get(t, "/metrics")
	testkit.Contains(t, "/metrics", body,
		"loadprobe_build_info{",
		"loadprobe_config_last_reload_successful 1",
		"loadprobe_config_last_reload_success_timestamp_seconds ",
		"go_goroutines ",
		"process_cpu_seconds_total ",
		// Every configured probe has its series from the start (the run at
		// start may be under way or over: completed and running vary).
		`loadprobe_runs_total{probe="work",result="completed"} `,
		`loadprobe_runs_total{probe="work",result="failed"} 0`,
		`loadprobe_requests_total{outcome="timeout",probe="work",step=""} 0`,
		`loadprobe_running{probe="work"} `,
		`loadprobe_schedule_interval_seconds{probe="work"} 3600`,
		`loadprobe_expected_min_capacity{probe="work"} 400`,
	)
	// The default registry, where go-conntrack writes, is not served.
	testkit.Lacks(t, "/metrics", body, "net_conntrack_")

	// OpenMetrics is offered (native histograms and exemplars need it or protobuf).
	req, _ := http.NewRequest(http.MethodGet, td.url+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("Content-Type for an OpenMetrics scrape = %q", ct)
	}
}

func TestEndpoints(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, false)
	testkit.Contains(t, "/-/healthy", td.get(t, "/-/healthy"), "Healthy")
	testkit.Contains(t, "/-/ready", td.get(t, "/-/ready"), "Ready")
	testkit.Contains(t, "/", td.get(t, "/"), "loadprobe", `href="/metrics"`, `href="/config"`, `href="/api/v1/results"`)
	if code, _ := td.do(t, http.MethodGet, "/no-such-page"); code != http.StatusNotFound {
		t.Errorf("GET /no-such-page: %d, want 404", code)
	}
}

func TestConfigRedactsSecrets(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, false)
	resp, err := http.Get(td.url + "/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/config Content-Type = %q, want text/plain", ct)
	}
	b, _ := io.ReadAll(resp.Body)
	testkit.Contains(t, "/config", string(b), "name: work", "username: alice", "password: <secret>")
	testkit.Lacks(t, "/config", string(b), "hunter2")
}

func TestReloadOverHTTP(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, true)

	if code, _ := td.do(t, http.MethodGet, "/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d, want 405", code)
	}

	// good: reloads.
	if code, body := td.do(t, http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("POST /-/reload of a good config: %d %s", code, body)
	}
	if g := td.reloadGauge(t); g != "1" {
		t.Errorf("reload gauge after a good reload = %s, want 1", g)
	}

	// bad: refused with the reason, the running config stays.
	td.write(t, testkit.BadConfig)
	code, body := td.do(t, http.MethodPost, "/-/reload")
	if code != http.StatusInternalServerError {
		t.Errorf("POST /-/reload of a bad config: %d, want 500", code)
	}
	testkit.Contains(t, "the failed reload's answer", body, filepath.Base(td.file)+":4:", "192.0.2.1")
	if g := td.reloadGauge(t); g != "0" {
		t.Errorf("reload gauge after a failed reload = %s, want 0", g)
	}
	testkit.Contains(t, "/config after a failed reload", td.get(t, "/config"), "name: work", "/work")
	testkit.Contains(t, "/-/ready after a failed reload", td.get(t, "/-/ready"), "Ready")

	// good again, with another probe: the removed probe's series go.
	td.write(t, testkit.OtherConfig)
	if code, body := td.do(t, http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("POST /-/reload of the fixed config: %d %s", code, body)
	}
	if g := td.reloadGauge(t); g != "1" {
		t.Errorf("reload gauge after the fixed config = %s, want 1", g)
	}
	testkit.Contains(t, "/config after the fix", td.get(t, "/config"), "name: other")
	testkit.Contains(t, "/metrics after the fix", td.get(t, "/metrics"),
		`loadprobe_runs_total{probe="other",result="failed"} 0`, `loadprobe_schedule_interval_seconds{probe="other"} 1800`)
	// The removed probe's series go once its run (canceled by the reload,
	// if still under way) has ended, and do not come back.
	testkit.WaitFor(t, "the removed probe's series to go", func() bool { return !strings.Contains(td.get(t, "/metrics"), `probe="work"`) })
	time.Sleep(100 * time.Millisecond)
	testkit.Lacks(t, "/metrics after the fix", td.get(t, "/metrics"), `probe="work"`)
	testkit.Lacks(t, "/api/v1/results after the fix", td.get(t, "/api/v1/results"), `"name": "work"`)
}

// The endpoints that change state answer 403 without --web.enable-lifecycle
// and change nothing; with it, a POST starts a run at once.
func TestLifecycleEndpoints(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		td := startDaemon(t, testkit.GoodConfig, false)
		td.waitRun(t, "work", 1)
		td.write(t, testkit.OtherConfig)
		for _, path := range []string{"/-/reload", "/-/pause", "/-/resume", "/api/v1/probes/work/run", "/api/v1/probes/nope/run"} {
			code, body := td.do(t, http.MethodPost, path)
			if code != http.StatusForbidden {
				t.Errorf("POST %s without --web.enable-lifecycle: %d, want 403", path, code)
			}
			testkit.Contains(t, "the refusal", body, "--web.enable-lifecycle")
		}
		testkit.Contains(t, "/config", td.get(t, "/config"), "name: work")
		time.Sleep(800 * time.Millisecond) // longer than a run
		m := td.get(t, "/metrics")
		if n := testkit.MetricValue(t, m, `loadprobe_runs_total{probe="work",result="completed"}`); n != 1 {
			t.Errorf("%g completed runs, want 1: a refused POST started a run", n)
		}
		testkit.Contains(t, "/metrics", m, `loadprobe_running{probe="work"} 0`)
	})
	t.Run("enabled", func(t *testing.T) {
		td := startDaemon(t, testkit.GoodConfig, true)
		td.waitRun(t, "work", 1)
		if code, _ := td.do(t, http.MethodGet, "/api/v1/probes/work/run"); code != http.StatusMethodNotAllowed {
			t.Errorf("GET /api/v1/probes/work/run: %d, want 405", code)
		}
		code, body := td.do(t, http.MethodPost, "/api/v1/probes/nope/run")
		if code != http.StatusNotFound {
			t.Errorf("POST /api/v1/probes/nope/run: %d, want 404", code)
		}
		testkit.Contains(t, "the 404", body, "nope")
		// The interval is an hour: a second run is the POST's.
		if code, body := td.do(t, http.MethodPost, "/api/v1/probes/work/run"); code != http.StatusAccepted {
			t.Fatalf("POST /api/v1/probes/work/run: %d %s, want 202", code, body)
		}
		testkit.WaitFor(t, "the requested run to start", func() bool {
			m := td.get(t, "/metrics")
			return strings.Contains(m, `loadprobe_running{probe="work"} 1`) || testkit.MetricValue(t, m, `loadprobe_runs_total{probe="work",result="completed"}`) >= 2
		})
		td.waitRun(t, "work", 2)
	})
}

// results reads /api/v1/results.
func (td *testDaemon) results(t *testing.T) []result.Result {
	t.Helper()
	var got struct{ Probes []result.Result }
	if err := json.Unmarshal([]byte(td.get(t, "/api/v1/results")), &got); err != nil {
		t.Fatal(err)
	}
	return got.Probes
}

// waitRun waits until the probe has completed n runs: at most 30s and 5s
// a run, as its runs may queue behind the other probes' (one at a time)
// and a run past capacity measures the recovery (3s or more) too.
func (td *testDaemon) waitRun(t *testing.T, probe string, n int) {
	t.Helper()
	series := fmt.Sprintf(`loadprobe_runs_total{probe=%q,result="completed"}`, probe)
	wait := 30*time.Second + time.Duration(n)*5*time.Second
	deadline := time.Now().Add(wait)
	for testkit.MetricValue(t, td.get(t, "/metrics"), series) < float64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: fewer than %d completed runs after %s; results:\n%s", probe, n, wait, td.get(t, "/api/v1/results"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestReloadOnSIGHUP(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, false)

	td.write(t, testkit.BadConfig)
	td.hup <- syscall.SIGHUP
	testkit.WaitFor(t, "the reload gauge to drop to 0", func() bool { return td.reloadGauge(t) == "0" })
	testkit.Contains(t, "/config after a failed SIGHUP reload", td.get(t, "/config"), "name: work")

	td.write(t, testkit.OtherConfig)
	td.hup <- syscall.SIGHUP
	testkit.WaitFor(t, "the new config", func() bool { return strings.Contains(td.get(t, "/config"), "name: other") })
	if g := td.reloadGauge(t); g != "1" {
		t.Errorf("reload gauge after a good SIGHUP reload = %s, want 1", g)
	}
}

// TestResults runs a short ramp against the demo target's /work (4 workers
// of 10ms: 100/s per connection) and reads it back as JSON and metrics.
func TestResults(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, false)

	// Until the first run ends, the run under way is all there is.
	sawRunning := false
	deadline := time.Now().Add(15 * time.Second)
	var last *result.Result
	for last == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no completed run of work within 15s:\n%s", td.get(t, "/api/v1/results"))
		}
		for _, r := range td.results(t) {
			switch {
			case r.Name == "work" && r.Ended == result.ResultRunning:
				sawRunning = true
			case r.Name == "work":
				last = &r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !sawRunning {
		t.Log("the run under way was not seen in /api/v1/results (the poll missed it)")
	}
	if last.Ended != result.ResultCompleted || len(last.Steps) != 2 {
		t.Fatalf("run %s with %d steps, want completed with 2; error %q", last.Ended, len(last.Steps), last.Error)
	}

	// The JSON of docs/results.md, keys and nulls included.
	var raw struct {
		Probes []map[string]json.RawMessage `json:"probes"`
	}
	if err := json.Unmarshal([]byte(td.get(t, "/api/v1/results")), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Probes) != 1 {
		t.Fatalf("%d results, want 1 (work, idle after its run at start)", len(raw.Probes))
	}
	p := raw.Probes[0]
	for _, k := range []string{"name", "mode", "result", "started", "duration_seconds", "steps", "peak_throughput", "breaking_points", "capacity", "valid", "diagnosis"} {
		if _, ok := p[k]; !ok {
			t.Errorf("result has no %q: %s", k, td.get(t, "/api/v1/results"))
		}
	}
	var bp map[string]json.RawMessage
	if err := json.Unmarshal(p["breaking_points"], &bp); err != nil {
		t.Fatal(err)
	}
	// Goodput doubles from 1 to 2 connections, the ramp's last level: no
	// rule fired, and the knee lies at or past the end of the ramp.
	for k, want := range map[string]string{"knee": "null", "latency_budget": "null", "first_failure": "null"} {
		if got, ok := bp[k]; !ok || string(got) != want {
			t.Errorf("breaking_points.%s = %s (present %v), want %s: the rule did not fire", k, got, ok, want)
		}
	}
	if got := string(p["reached_up_to"]); got != "2" {
		t.Errorf("reached_up_to = %s, want 2: the highest level the rules were measured up to", got)
	}
	// About 200/s; less when other work keeps the machine busy.
	if c := last.Capacity; c == nil || c.Level != 2 || c.Throughput < 100 || c.Throughput > 210 {
		t.Errorf("capacity %+v, want about 200/s at 2 connections", c)
	}
	var steps []map[string]json.RawMessage
	if err := json.Unmarshal(p["steps"], &steps); err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		for _, k := range []string{"level", "name", "duration_seconds", "attempts", "throughput", "goodput", "error_ratio", "latency_seconds", "responses", "errors", "in_flight", "load_held_ratio", "settle_seconds", "per_second"} {
			if _, ok := st[k]; !ok {
				t.Errorf("step %d has no %q", i, k)
			}
		}
	}
	if s := last.Steps[0]; s.Level != 1 || s.Responses[result.HTTPStatus(200)] == 0 || s.Latency.P99 <= 0 {
		t.Errorf("step 1: %+v", s)
	}

	m := td.get(t, "/metrics")
	for series, check := range map[string]func(float64) bool{
		`loadprobe_capacity_throughput{probe="work"}`:                            func(v float64) bool { return v == last.Capacity.Throughput },
		`loadprobe_capacity_level{probe="work"}`:                                 func(v float64) bool { return v == 2 },
		`loadprobe_run_valid{probe="work"}`:                                      func(v float64) bool { return v == 1 },
		`loadprobe_step_goodput{level="1",probe="work"}`:                         func(v float64) bool { return v > 50 && v < 110 },
		`loadprobe_step_goodput{level="2",probe="work"}`:                         func(v float64) bool { return v > 100 && v < 210 },
		`loadprobe_runs_total{probe="work",result="completed"}`:                  func(v float64) bool { return v >= 1 },
		`loadprobe_requests_total{outcome="success",probe="work",step=""}`:       func(v float64) bool { return v > 0 },
		`loadprobe_run_last_completed_timestamp_seconds{probe="work"}`:           func(v float64) bool { return math.Abs(v-float64(time.Now().Unix())) < 30 },
		`loadprobe_run_wait_seconds_total{probe="work"}`:                         func(v float64) bool { return v >= 0 },
		`loadprobe_responses_total{code="200",probe="work",step=""}`:             func(v float64) bool { return v > 0 },
		`loadprobe_step_latency_seconds{level="2",probe="work",quantile="0.99"}`: func(v float64) bool { return v > 0.005 && v < 0.2 },
	} {
		if v := testkit.MetricValue(t, m, series); !check(v) {
			t.Errorf("%s %g is off", series, v)
		}
	}
	// Rules that did not fire have no series.
	testkit.Lacks(t, "/metrics", m, `rule="knee"`, `rule="latency_budget"`, `rule="first_failure"`)
}

// A restarted daemon serves the last results it kept under --storage.path
// at once, with their original timestamps, before its own first run ends;
// and shutting it down mid-run does not replace them.
func TestStorageRestoresResultsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	target := demoTarget(t)
	first := startDaemonWith(t, testkit.GoodConfig, daemonOptions{storage: dir, target: target})
	first.waitRun(t, "work", 1)
	before := first.results(t)
	m := first.get(t, "/metrics")
	completedAt := testkit.MetricValue(t, m, `loadprobe_run_last_completed_timestamp_seconds{probe="work"}`)
	capacity := testkit.MetricValue(t, m, `loadprobe_capacity_throughput{probe="work"}`)
	first.stop(t)
	if len(before) != 1 {
		t.Fatalf("first daemon served %d results, want 1", len(before))
	}

	// The second daemon's run at start takes 20s: what it serves meanwhile
	// is what the first one kept.
	slow := strings.Replace(testkit.GoodConfig, "step_duration: 300ms", "step_duration: 10s", 1)
	second := startDaemonWith(t, slow, daemonOptions{storage: dir, target: target})
	var restored, running *result.Result
	for _, r := range second.results(t) {
		switch r.Ended {
		case result.ResultRunning:
			running = &r
		default:
			restored = &r
		}
	}
	if restored == nil {
		t.Fatalf("the restarted daemon serves no kept result:\n%s", second.get(t, "/api/v1/results"))
	}
	if !restored.Started.Equal(before[0].Started) || restored.Ended != result.ResultCompleted {
		t.Errorf("restored run started %v (%s), want the original %v (completed)", restored.Started, restored.Ended, before[0].Started)
	}
	if !reflect.DeepEqual(restored.BreakingPoints, before[0].BreakingPoints) || !reflect.DeepEqual(restored.Capacity, before[0].Capacity) {
		t.Errorf("restored breaking points %+v, capacity %+v; want %+v, %+v", restored.BreakingPoints, restored.Capacity, before[0].BreakingPoints, before[0].Capacity)
	}
	if running != nil && running.Started.Equal(before[0].Started) {
		t.Error("the run under way carries the restored run's start")
	}
	// The run at start may still be waiting for its admission: the kept
	// figures must stand beside it once it runs.
	testkit.WaitFor(t, "the restarted daemon's run of work", func() bool {
		m = second.get(t, "/metrics")
		return strings.Contains(m, `loadprobe_running{probe="work"} 1`)
	})
	if v := testkit.MetricValue(t, m, `loadprobe_run_last_completed_timestamp_seconds{probe="work"}`); v != completedAt {
		t.Errorf("restored last completed timestamp %f, want the stored %f", v, completedAt)
	}
	if v := testkit.MetricValue(t, m, `loadprobe_capacity_throughput{probe="work"}`); v != capacity {
		t.Errorf("restored capacity %g, want %g", v, capacity)
	}

	// Stopped mid-run: the canceled run is no result, the kept one stays.
	second.stop(t)
	store, err := schedule.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || !kept[0].Last.Started.Equal(before[0].Started) {
		t.Errorf("after a shutdown mid-run the store holds %+v, want the first daemon's run", kept)
	}
}

// A results file the daemon cannot read does not stop it (a crash loop
// over a cache would probe nothing); it is set aside, not overwritten.
func TestStorageCorruptFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "results.json")
	testkit.WriteFile(t, file, "{not json")
	addrs, webConfig := []string{"127.0.0.1:0"}, ""
	if _, err := New(Options{
		ConfigFile:  filepath.Join(dir, "loadprobe.yml"),
		Web:         &web.FlagConfig{WebListenAddresses: &addrs, WebConfigFile: &webConfig},
		StoragePath: dir,
		Logger:      promslog.NewNopLogger(),
	}); err != nil {
		t.Fatalf("NewDaemon with a corrupt results file = %v, want it to start", err)
	}
	if kept, err := os.ReadFile(file + ".corrupt"); err != nil || string(kept) != "{not json" {
		t.Errorf("the corrupt results file was not set aside: %q, %v", kept, err)
	}
}

func TestRunFailsOnBadConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.yml")
	testkit.WriteFile(t, file, testkit.BadConfig)
	addrs, webConfig := []string{"127.0.0.1:0"}, ""
	d, err := New(Options{
		ConfigFile: file,
		Web:        &web.FlagConfig{WebListenAddresses: &addrs, WebConfigFile: &webConfig},
		Logger:     promslog.NewNopLogger(),
		Hup:        make(chan os.Signal),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bad.yml:4:") {
		t.Errorf("Run with a bad config = %v, want an error naming bad.yml:4", err)
	}
}

func TestShutdown(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, false)
	td.cancel()
	select {
	case err := <-td.stopped:
		if err != nil {
			t.Errorf("Run = %v after cancel, want nil", err)
		}
		td.stopped <- err // for the cleanup
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return within 2s of cancel")
	}
	if _, err := http.Get(td.url + "/-/healthy"); err == nil {
		t.Error("still serving after shutdown")
	}
}
