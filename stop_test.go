package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// SIGTERM ends `loadprobe run` whatever its run waits for (here a server
// that answered 101 and says nothing more), with the run under way printed
// as canceled (exit 1: its expectation was not met). The daemon's own
// shutdown is tested in package daemon.
func TestRunEndsOnSIGTERMDuringAHeldResponse(t *testing.T) {
	url, held := holdingServer(t, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, `allowed_targets: ["127.0.0.1"]
probes:
  - name: held
    request:
      url: `+url+`
      timeout: 30s
    load: {concurrency: [2], step_duration: 30s}
`)
	cmd := exec.Command(binary, "run", "--config.file="+file, "--output=json")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("no attempt reached the holding server within 10s")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitExpect {
			t.Errorf("loadprobe run after SIGTERM: %v, want exit %d", err, exitExpect)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("loadprobe run did not exit within 5s of SIGTERM")
	}
	var out struct{ Probes []result.Result }
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil || len(out.Probes) != 1 || out.Probes[0].Ended != result.ResultCanceled {
		t.Errorf("printed %s (%v), want the held run, canceled", stdout.String(), err)
	}
}
