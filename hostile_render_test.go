package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// A config whose templates can render a request above 16 MiB is an error
// at load, with its file and line: here 2 000 × {{random_string 1048576}}
// in 50 KB of YAML.
func TestTemplatesThatCanExceedTheBoundAreRejected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: big
    request: {url: "%s/", method: POST, body: '%s'}
    load: {concurrency: [1], step_duration: 1s}
`, srv.URL, strings.Repeat("{{random_string 1048576}}", 2000)))
	want := `loadprobe.yml:4: probes[0].request: the templates can render a request of 2097152023 bytes (url, headers and body), above the bound of 16777216 (16 MiB)`
	if code, _, stderr := loadprobe(t, "--config.check", "--config.file="+file); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("--config.check: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

// A captured value that makes a request render above the bound is not
// sent: the flow step's attempts end as request_too_large, and the target
// never sees them.
func TestCaptureThatMakesARequestTooLarge(t *testing.T) {
	token := strings.Repeat("t", 9<<20)
	var items, itemBytes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/item" {
			n, _ := io.Copy(io.Discard, r.Body)
			items.Add(1)
			itemBytes.Add(n)
			return
		}
		fmt.Fprintf(w, `{"token": %q}`, token)
	}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: flow
    flow:
      - name: login
        request: {url: "%[1]s/login", timeout: 10s}
        capture: {token: {json: token}}
      - name: item
        request: {url: "%[1]s/item", method: POST, body: '{{.token}}{{.token}}', timeout: 10s}
    load: {concurrency: [1], step_duration: 1s}
    abort: {error_ratio: 1}
`, srv.URL))
	_, stdout, stderr := loadprobe(t, "run", "--output=json", "--config.file="+file) // a run whose iterations all fail exits non-zero
	var out struct{ Probes []result.Result }
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Probes) != 1 || len(out.Probes[0].Steps) != 1 || len(out.Probes[0].Steps[0].Flow) != 2 {
		t.Fatalf("stdout is not one flow probe's one step (%v):\n%s\n%s", err, stdout, stderr)
	}
	item := out.Probes[0].Steps[0].Flow[1]
	t.Logf("item: %d attempts, errors %v; the target saw %d item requests, %d MB", item.Attempts, item.Errors, items.Load(), itemBytes.Load()>>20)
	if item.Attempts == 0 || item.Errors["request_too_large"] != item.Attempts || items.Load() != 0 {
		t.Errorf("item: %d attempts, errors %v, %d sent; want every attempt request_too_large and none sent", item.Attempts, item.Errors, items.Load())
	}
}
