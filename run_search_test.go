package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

func searchConfig(t *testing.T, target string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "%s/work"}
    load:
      search: {concurrency: {from: 1, max: 32}}
      step_duration: 500ms
`, target))
	return file
}

// A search's table lists its levels in order of level, each with its place
// in the run and what it was measured for, and every breaking point with
// its bracket; the progress says what each step is for.
func TestRunPrintsTheSearchTable(t *testing.T) {
	code, stdout, stderr := loadprobe(t, "run", "--config.file="+searchConfig(t, workTarget(t)))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	testkit.Contains(t, "the table", stdout,
		"probe work: concurrency search, completed",
		"step  search  connections",
		"knee            4 connections, bracket [3, 4]",
		"latency budget  not reached up to 8 connections",
	)
	testkit.Contains(t, "the progress on stderr", stderr,
		"work: step 1 of at most 24 (growing from 1), level 1",
		"work: step 5 of at most 24 (refining the knee between 2 and 4), level 3")

	var levels []float64
	rows := false
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 2 && f[0] == "step" && f[1] == "search":
			rows = true
		case rows && len(f) > 2 && (f[1] == "grow" || f[1] == "refine"):
			l, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatalf("row %q: %v", line, err)
			}
			levels = append(levels, l)
		case rows:
			rows = false
		}
	}
	if fmt.Sprint(levels) != "[1 2 3 4 8]" {
		t.Errorf("table rows at levels %v, want [1 2 3 4 8] in order of level\n%s", levels, stdout)
	}
}

// A fleet's search chooses each level from the fleet's figures, read from
// the fleet's Prometheus: a replica without one is refused with the line
// of the search's key.
func TestRunRefusesToSearchOnAFleetWithoutItsPrometheus(t *testing.T) {
	file := searchConfig(t, "http://127.0.0.1:1")
	code, _, stderr := loadprobe(t, "run", "--config.file="+file, "--shard=0/2")
	if code != exitUsageErr {
		t.Errorf("exit %d, want %d", code, exitUsageErr)
	}
	testkit.Contains(t, "the error", stderr, file+":6: probes[0].load.search: a fleet (--shard 0/2) searches by reading every shard's steps from the fleet's Prometheus, and this replica has no --fleet.prometheus-url")
}
