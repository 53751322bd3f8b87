package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// `run --url` probes one URL without a file, with the request the flags
// describe, and prints the table a config's probe gets.
func TestRunURL(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[fmt.Sprintf("%s %s %s %s", r.Method, r.URL.Path, r.Header.Get("X-Probe"), body)]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}))
	t.Cleanup(srv.Close)

	code, stdout, stderr := loadprobe(t, "run", "--url="+srv.URL+"/orders", "--concurrency=1,2", "--step=500ms",
		"--method=POST", "--header=X-Probe: yes", "--body=hi", "--timeout=2s")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	testkit.Contains(t, "the table", stdout,
		"probe url: concurrency ramp, completed", "p50", "p90", "p99",
		"knee            not reached up to 2 connections", "capacity: ")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen["POST /orders yes hi"] == 0 {
		t.Errorf("the target saw %v, want every request as POST /orders with X-Probe: yes and the body hi", seen)
	}
}

// Flags that cannot make one probe are usage errors (exit 2) that name the
// flag, before any load is sent.
func TestRunURLErrors(t *testing.T) {
	const url = "--url=http://127.0.0.1:1/"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{url}, "--url takes one of --concurrency, --rate or --search"},
		{[]string{url, "--concurrency=1", "--rate=5"}, "not --concurrency and --rate"},
		{[]string{url, "--concurrency=4,2"}, "--concurrency: levels must increase (got 2 after 4)"},
		{[]string{url, "--concurrency=1,two"}, `--concurrency=1,two: "two" is not a number`},
		{[]string{url, "--search=concurrency:1"}, "--search=concurrency:1: want AXIS:FROM:MAX"},
		{[]string{url, "--rate=5", "--step=5"}, `--step: not a valid duration string: "5"`},
		{[]string{url, "--rate=5", "--header=X-Probe"}, "--header=X-Probe: want NAME:VALUE"},
		{[]string{"--url=127.0.0.1:8080", "--rate=5"}, "want an absolute URL"},
		{[]string{"--concurrency=1,2", "--step=1s"}, "--concurrency, --step: given without --url"},
		{[]string{url, "--rate=5", "--config.file=loadprobe.yml"}, "give --url or --config.file, not both"},
	} {
		code, stdout, stderr := loadprobe(t, append([]string{"run"}, tc.args...)...)
		if code != exitUsageErr || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("run %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// --config.file=- reads the config from standard input; its errors name it.
func TestRunConfigFromStdin(t *testing.T) {
	config := fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: piped
    request: {url: "%s/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
`, workTarget(t))
	code, stdout, stderr := loadprobeIn(t, "", config, "run", "--config.file=-")
	if code != 0 || !strings.Contains(stdout, "probe piped: concurrency ramp, completed") {
		t.Errorf("exit %d, want 0 and the table of piped\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = loadprobeIn(t, "", strings.Replace(config, "300ms", "3 seconds", 1), "run", "--config.file=-")
	if want := "<stdin>:5: probes[0].load.step_duration:"; code != exitUsageErr || !strings.Contains(stderr, want) {
		t.Errorf("a bad config on stdin: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}

// Without loadprobe.yml where a new user first types the command, run and
// the daemon say what to write, or what to run instead.
func TestMissingDefaultConfigPointsToTheFirstProbe(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"run"}, {}} {
		code, _, stderr := loadprobeIn(t, dir, "", args...)
		command := strings.Join(append([]string{"loadprobe"}, args...), " ")
		// The daemon logs it in logfmt, which escapes the quotes.
		testkit.Contains(t, fmt.Sprintf("%s without a config (exit %d)", command, code), stderr,
			"no loadprobe.yml here", "Your first probe", "loadprobe run --url=")
		if code == 0 {
			t.Errorf("%s without a config: exit 0", command)
		}
	}
	// Named on the command line, a missing file is a plain error.
	_, _, stderr := loadprobeIn(t, dir, "", "run", "--config.file=loadprobe.yml")
	testkit.Lacks(t, "run with a missing --config.file", stderr, "Your first probe")
	testkit.Contains(t, "run with a missing --config.file", stderr, "cannot read loadprobe.yml")
}

// --output=html writes the report: one HTML page with the run's chart,
// whatever the exit code says of the expectations.
func TestRunHTML(t *testing.T) {
	code, stdout, stderr := loadprobe(t, "run", "--url="+workTarget(t)+"/work", "--concurrency=1,2,4", "--step=300ms", "--output=html")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "<!DOCTYPE html>") {
		t.Fatalf("stdout is not an HTML page:\n%.200s", stdout)
	}
	testkit.Contains(t, "the report", stdout, `<section class="probe" id="probe-url">`, `<svg class="ramp"`, `<table class="steps">`)
}
