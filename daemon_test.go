package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/loadprobe/loadprobe/prober"
)

const goodConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request:
      url: http://127.0.0.1:8080/work
      basic_auth: {username: alice, password: hunter2}
    load: {concurrency: [1, 2, 4]}
    expect: {min_capacity: 400}
`

// otherConfig replaces the probe "work" with "other".
const otherConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: other
    request: {url: http://127.0.0.1:8080/noop}
    load: {rate: [10, 20]}
    schedule: {interval: 30m}
`

// badConfig fails validation on line 4: the host is not allowed.
const badConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: http://192.0.2.1/work}
    load: {concurrency: [1, 2, 4]}
`

type testDaemon struct {
	*Daemon
	url     string
	file    string
	hup     chan os.Signal
	cancel  context.CancelFunc
	stopped chan error
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startDaemon runs a daemon in-process on a free loopback port with config
// as its config file, and stops it when the test ends.
func startDaemon(t *testing.T, config string, lifecycle bool) *testDaemon {
	t.Helper()
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	writeFile(t, file, config)
	addrs, webConfig, systemd := []string{"127.0.0.1:0"}, "", false
	hup := make(chan os.Signal, 1)
	d, err := NewDaemon(DaemonOptions{
		ConfigFile:      file,
		Web:             &web.FlagConfig{WebListenAddresses: &addrs, WebConfigFile: &webConfig, WebSystemdSocket: &systemd},
		EnableLifecycle: lifecycle,
		Logger:          promslog.NewNopLogger(),
		Hup:             hup,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDaemon{Daemon: d, file: file, hup: hup, cancel: cancel, stopped: make(chan error, 1)}
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
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-td.stopped:
			if err != nil {
				t.Errorf("Run returned %v after cancel", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("daemon did not stop within 5s of cancel")
		}
	})
	return td
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

func contains(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, body)
		}
	}
}

func lacks(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(body, w) {
			t.Errorf("%s contains %q:\n%s", what, w, body)
		}
	}
}

func TestMetricsEndpoint(t *testing.T) {
	td := startDaemon(t, goodConfig, false)
	body := td.get(t, "/metrics")
	contains(t, "/metrics", body,
		"loadprobe_build_info{",
		"loadprobe_config_last_reload_successful 1",
		"loadprobe_config_last_reload_success_timestamp_seconds ",
		"go_goroutines ",
		"process_cpu_seconds_total ",
		// Every configured probe has its series from the start.
		`loadprobe_runs_total{probe="work",result="completed"} 0`,
		`loadprobe_requests_total{outcome="timeout",probe="work"} 0`,
		`loadprobe_running{probe="work"} 0`,
		`loadprobe_schedule_interval_seconds{probe="work"} 3600`,
		`loadprobe_expected_min_capacity{probe="work"} 400`,
	)
	// The default registry, where go-conntrack writes, is not served.
	lacks(t, "/metrics", body, "net_conntrack_")

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
	td := startDaemon(t, goodConfig, false)
	contains(t, "/-/healthy", td.get(t, "/-/healthy"), "Healthy")
	contains(t, "/-/ready", td.get(t, "/-/ready"), "Ready")
	contains(t, "/", td.get(t, "/"), "loadprobe", `href="/metrics"`, `href="/config"`, `href="/api/v1/results"`)
	if code, _ := td.do(t, http.MethodGet, "/no-such-page"); code != http.StatusNotFound {
		t.Errorf("GET /no-such-page: %d, want 404", code)
	}
}

func TestConfigRedactsSecrets(t *testing.T) {
	td := startDaemon(t, goodConfig, false)
	resp, err := http.Get(td.url + "/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/config Content-Type = %q, want text/plain", ct)
	}
	b, _ := io.ReadAll(resp.Body)
	contains(t, "/config", string(b), "name: work", "username: alice", "password: <secret>")
	lacks(t, "/config", string(b), "hunter2")
}

func TestReloadOverHTTP(t *testing.T) {
	td := startDaemon(t, goodConfig, true)

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
	writeFile(t, td.file, badConfig)
	code, body := td.do(t, http.MethodPost, "/-/reload")
	if code != http.StatusInternalServerError {
		t.Errorf("POST /-/reload of a bad config: %d, want 500", code)
	}
	contains(t, "the failed reload's answer", body, filepath.Base(td.file)+":4:", "192.0.2.1")
	if g := td.reloadGauge(t); g != "0" {
		t.Errorf("reload gauge after a failed reload = %s, want 0", g)
	}
	contains(t, "/config after a failed reload", td.get(t, "/config"), "name: work", "/work")
	contains(t, "/-/ready after a failed reload", td.get(t, "/-/ready"), "Ready")

	// good again, with another probe: the removed probe's series go.
	writeFile(t, td.file, otherConfig)
	if code, body := td.do(t, http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("POST /-/reload of the fixed config: %d %s", code, body)
	}
	if g := td.reloadGauge(t); g != "1" {
		t.Errorf("reload gauge after the fixed config = %s, want 1", g)
	}
	contains(t, "/config after the fix", td.get(t, "/config"), "name: other")
	metrics := td.get(t, "/metrics")
	contains(t, "/metrics after the fix", metrics, `loadprobe_runs_total{probe="other",result="completed"} 0`, `loadprobe_schedule_interval_seconds{probe="other"} 1800`)
	lacks(t, "/metrics after the fix", metrics, `probe="work"`)
}

func TestReloadNeedsLifecycleFlag(t *testing.T) {
	td := startDaemon(t, goodConfig, false)
	writeFile(t, td.file, otherConfig)
	code, body := td.do(t, http.MethodPost, "/-/reload")
	if code != http.StatusForbidden {
		t.Errorf("POST /-/reload without --web.enable-lifecycle: %d, want 403", code)
	}
	contains(t, "the refusal", body, "--web.enable-lifecycle")
	contains(t, "/config", td.get(t, "/config"), "name: work")
}

// waitFor polls cond every 10ms for at most 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReloadOnSIGHUP(t *testing.T) {
	td := startDaemon(t, goodConfig, false)

	writeFile(t, td.file, badConfig)
	td.hup <- syscall.SIGHUP
	waitFor(t, "the reload gauge to drop to 0", func() bool { return td.reloadGauge(t) == "0" })
	contains(t, "/config after a failed SIGHUP reload", td.get(t, "/config"), "name: work")

	writeFile(t, td.file, otherConfig)
	td.hup <- syscall.SIGHUP
	waitFor(t, "the new config", func() bool { return strings.Contains(td.get(t, "/config"), "name: other") })
	if g := td.reloadGauge(t); g != "1" {
		t.Errorf("reload gauge after a good SIGHUP reload = %s, want 1", g)
	}
}

func TestResults(t *testing.T) {
	td := startDaemon(t, goodConfig, false)
	body := td.get(t, "/api/v1/results")
	var empty map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &empty); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(string(empty["probes"])), ""); got != "[]" || len(empty) != 1 {
		t.Errorf("/api/v1/results before any run = %s, want {\"probes\": []}", body)
	}

	// The scheduler feeds results; they show up as JSON and as metrics.
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := prober.Result{
		Name: "work", Mode: "concurrency", Result: prober.ResultRunning, Started: started,
		Steps: []prober.Step{{Level: 1, Goodput: 100, Throughput: 100}},
	}
	td.Results().Update(run)
	metrics := td.get(t, "/metrics")
	contains(t, "/metrics during a run", metrics, `loadprobe_step_goodput{level="1",probe="work"} 100`)
	lacks(t, "/metrics during a run", metrics, "loadprobe_run_valid", "loadprobe_run_last_completed_timestamp_seconds")
	contains(t, "/api/v1/results during the first run", td.get(t, "/api/v1/results"), `"probes": []`)

	run.Result, run.DurationSeconds, run.Valid = prober.ResultCompleted, 10, true
	run.Capacity = &prober.Point{Level: 1, Throughput: 100}
	td.Results().Update(run)
	var got struct{ Probes []prober.Result }
	if err := json.Unmarshal([]byte(td.get(t, "/api/v1/results")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Probes) != 1 || got.Probes[0].Name != "work" || got.Probes[0].Result != "completed" || got.Probes[0].Capacity.Throughput != 100 {
		t.Errorf("/api/v1/results after a run = %+v", got)
	}
	contains(t, "/metrics after a run", td.get(t, "/metrics"),
		`loadprobe_capacity_throughput{probe="work"} 100`,
		`loadprobe_run_valid{probe="work"} 1`,
		`loadprobe_run_last_completed_timestamp_seconds{probe="work"} 1.767323055e+09`,
	)
}

func TestRunFailsOnBadConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.yml")
	writeFile(t, file, badConfig)
	addrs, webConfig := []string{"127.0.0.1:0"}, ""
	d, err := NewDaemon(DaemonOptions{
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
	td := startDaemon(t, goodConfig, false)
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
