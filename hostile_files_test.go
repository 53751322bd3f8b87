package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// TestRunOutOfFileDescriptors runs 100 connections under a file-descriptor
// limit of 64 against a loopback server that answers every request: the
// dials that find no descriptor are the generator's (outcome generator,
// none of them other), they back off instead of spinning, and the run is
// not valid, saying the generator ran out of file descriptors with its
// limit.
func TestRunOutOfFileDescriptors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: fds
    request: {url: "%s/", timeout: 1s}
    load: {concurrency: [100], step_duration: 2s}
    abort: {error_ratio: 1}
`, srv.URL))
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("sh", "-c", `ulimit -n 64 && exec "$0" "$@"`, binary, "run", "--output=json", "--config.file="+file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run() // an invalid run exits non-zero
	var out struct{ Probes []result.Result }
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out.Probes) != 1 || len(out.Probes[0].Steps) != 1 {
		t.Fatalf("stdout is not one probe's one step (%v):\n%s\n%s", err, stdout.String(), stderr.String())
	}
	warning := "warning: probe fds: level 100 may need 164 file descriptors"
	if !strings.Contains(stderr.String(), warning) {
		t.Errorf("stderr %q lacks the warning at load %q", stderr.String(), warning)
	}
	r := out.Probes[0]
	step := r.Steps[0]
	t.Logf("%d attempts, %d responses, errors %v, limit %d; diagnosis %q", step.Attempts, step.Responses[result.HTTPStatus(200)], step.Errors, step.FileLimit, r.Diagnosis)
	if step.Errors["generator"] == 0 || step.Errors["other"] != 0 || step.FileLimit != 64 {
		t.Errorf("errors %v, limit %d: want the failed dials as generator, none as other, and the limit 64", step.Errors, step.FileLimit)
	}
	// Each of the connections that found no descriptor waits 50 ms
	// between dials: at most 20 failed dials a second each (with room for
	// a busy machine), never a hot loop of hundreds of thousands.
	if most := int64(100 * 20 * step.DurationSeconds * 1.5); step.Errors["generator"] > most {
		t.Errorf("%d failed dials in %.1f s, want at most %d: a failed dial must back off", step.Errors["generator"], step.DurationSeconds, most)
	}
	if step.Responses[result.HTTPStatus(200)] == 0 {
		t.Error("no response: the connections that did open sent nothing")
	}
	want := "the generator ran out of file descriptors (limit 64)"
	if r.Valid || !strings.Contains(strings.Join(r.Diagnosis, "\n"), want) {
		t.Errorf("valid %v, diagnosis %q; want not valid and %q", r.Valid, r.Diagnosis, want)
	}
	for _, line := range r.Diagnosis {
		if strings.Contains(line, "cliff") || strings.Contains(line, "collapse") {
			t.Errorf("diagnosis %q blames the target for the generator's limit", line)
		}
	}
}

// TestSoftFileLimitIsRaised: started with a soft limit of 64 under a hard
// one of 4096, loadprobe runs with the hard one (Go's runtime raises the
// soft limit at start), so a level of 100 connections draws no warning at
// load; under a hard limit of 64 it does.
func TestSoftFileLimitIsRaised(t *testing.T) {
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, `allowed_targets: ["127.0.0.1"]
probes:
  - name: fds
    request: {url: "http://127.0.0.1:9/", timeout: 1s}
    load: {concurrency: [100]}
`)
	warning := "warning: probe fds: level 100 may need 164 file descriptors"
	for limits, warned := range map[string]bool{"ulimit -Sn 64 && ulimit -Hn 4096": false, "ulimit -n 64": true} {
		var stderr bytes.Buffer
		cmd := exec.Command("sh", "-c", limits+` && exec "$0" "$@"`, binary, "--config.check", "--config.file="+file)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", limits, err, stderr.String())
		}
		if got := strings.Contains(stderr.String(), warning); got != warned {
			t.Errorf("%s: warned %v, want %v (stderr %q)", limits, got, warned, stderr.String())
		}
	}
}
