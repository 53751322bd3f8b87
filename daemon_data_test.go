package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// tinyRows writes a CSV data file of 64 MiB, the bound of a data file,
// made of one-character rows (33 554 431 of them) all holding value.
func tinyRows(t *testing.T, path string, value byte) {
	t.Helper()
	text := bytes.Repeat([]byte{value, '\n'}, 32<<20)
	copy(text, "u\n")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
}

// peakMemory is the most memory (resident) process pid has held, in bytes.
func peakMemory(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}

// TestDaemonHoldsADataFileOfTinyRows gives a probe a data file as large as
// allowed, of one-character rows: --config.check, the daemon's start and
// three reloads that change the file stay under 1 GiB, a scrape answers
// within a scrape timeout all along (the rows were compared one by one
// under the scheduler's lock: 41 to 103 s), and a SIGTERM during a
// reload ends the daemon within 5 s (it waited for the reload: 73 to 105 s).
// Before, the check took 3 GB and the daemon 11 GB after three reloads.
func TestDaemonHoldsADataFileOfTinyRows(t *testing.T) {
	const limit = 1 << 30
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny.csv")
	tinyRows(t, data, 'a')
	file := filepath.Join(dir, "loadprobe.yml")
	testkit.WriteFile(t, file, `allowed_targets: ["127.0.0.1"]
probes:
  - name: tiny
    data: {file: tiny.csv}
    request: {url: "http://127.0.0.1:1/{{.u}}"}
    load: {concurrency: [1], step_duration: 1s}
    schedule: {interval: 1h}
`)

	check := exec.Command(binary, "--config.check", "--config.file="+file)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("--config.check: %v\n%s", err, out)
	}
	peak := check.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("--config.check's peak memory: %d MiB", peak>>20)
	if peak > limit {
		t.Errorf("--config.check held %d MiB, want under %d", peak>>20, limit>>20)
	}

	d := startDaemon(t, exec.Command(binary, "--config.file="+file, "--web.listen-address=127.0.0.1:0"))
	scrape := &http.Client{Timeout: 10 * time.Second} // Prometheus's default scrape timeout
	var slowest time.Duration
	scrapeOnce := func(during string) {
		start := time.Now()
		resp, err := scrape.Get(d.base + "/metrics")
		if err != nil {
			t.Fatalf("a scrape %s: %v", during, err)
		}
		resp.Body.Close()
		slowest = max(slowest, time.Since(start))
	}
	reloads := func() int { return strings.Count(d.Log(), `msg="Loaded config file"`) }
	for i, value := range []byte("bab") {
		tinyRows(t, data, value)
		before := reloads()
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for reloads() == before {
			if time.Now().After(deadline) {
				t.Fatalf("reload %d did not end within 60s:\n%s", i+1, d.Log())
			}
			scrapeOnce(fmt.Sprintf("during reload %d", i+1))
			time.Sleep(50 * time.Millisecond)
		}
		scrapeOnce(fmt.Sprintf("after reload %d", i+1))
	}
	if code, body := d.get(t, "/config"); code != 200 || !strings.Contains(body, "33554431 rows") {
		t.Errorf("/config after the reloads: %d\n%s\nwant the data's 33554431 rows", code, body)
	}
	peak = peakMemory(t, d.cmd.Process.Pid)
	t.Logf("the daemon's peak memory over its start and three reloads: %d MiB; slowest scrape %s", peak>>20, slowest)
	if peak > limit {
		t.Errorf("the daemon held %d MiB, want under %d", peak>>20, limit>>20)
	}

	// A reload that parses the file again takes seconds: SIGTERM during it.
	tinyRows(t, data, 'c')
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !d.wait(5 * time.Second) {
		t.Fatal("the daemon did not exit within 5s of a SIGTERM during a reload")
	}
	if !d.cmd.ProcessState.Success() {
		t.Errorf("the daemon after SIGTERM: %v, want exit 0", d.cmd.ProcessState)
	}
}
