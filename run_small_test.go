package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// pathServer answers 200 to everything and records the paths it was asked for.
func pathServer(t *testing.T) (url string, paths func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

// TestRunDataFileWithAByteOrderMark runs a probe whose data file starts
// with the UTF-8 byte order mark a spreadsheet writes: the mark is no part
// of the first column's name, and every row reaches the target.
func TestRunDataFileWithAByteOrderMark(t *testing.T) {
	for name, data := range map[string]string{
		"users.csv":   "\uFEFFuser,n\nann,1\nbob,2\n",
		"users.jsonl": "\uFEFF" + `{"user": "ann", "n": 1}` + "\n" + `{"user": "bob", "n": 2}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			url, paths := pathServer(t)
			dir := t.TempDir()
			testkit.WriteFile(t, filepath.Join(dir, name), data)
			file := filepath.Join(dir, "loadprobe.yml")
			testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: users
    data: {file: %s}
    request: {url: "%s/{{.user}}/{{.n}}"}
    load: {concurrency: [1], step_duration: 300ms}
`, name, url))
			code, _, stderr := loadprobe(t, "run", "--config.file="+file, "--output=json")
			if code != 0 {
				t.Fatalf("run with a BOM in %s: exit %d, want 0\n%s", name, code, stderr)
			}
			got := paths()
			if got["/ann/1"] == 0 || got["/bob/2"] == 0 || len(got) != 2 {
				t.Errorf("the target saw %v, want /ann/1 and /bob/2 only", got)
			}
		})
	}
}

// TestRunProbeNamedTwiceRunsOnce: `run --probe=p --probe=p` runs p once.
func TestRunProbeNamedTwiceRunsOnce(t *testing.T) {
	url, _ := pathServer(t)
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: p
    request: {url: "%s/"}
    load: {concurrency: [1], step_duration: 200ms}
  - name: q
    request: {url: "%s/"}
    load: {concurrency: [1], step_duration: 200ms}
`, url, url))
	code, stdout, stderr := loadprobe(t, "run", "--config.file="+file, "--probe=p", "--probe=q", "--probe=p", "--output=json")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, stderr)
	}
	var out struct {
		Probes []struct {
			Name string `json:"name"`
		} `json:"probes"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("stdout is not the result JSON: %v\n%s", err, stdout)
	}
	var names []string
	for _, p := range out.Probes {
		names = append(names, p.Name)
	}
	if fmt.Sprint(names) != "[p q]" {
		t.Errorf("--probe=p --probe=q --probe=p ran %v, want [p q]", names)
	}
}
