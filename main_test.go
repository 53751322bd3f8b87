package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// binary is loadprobe built once for the tests that run it as a process.
var binary string

const testVersion = "0.0.0-test"

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "loadprobe-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "loadprobe")
		build := exec.Command("go", "build", "-o", binary,
			"-ldflags", "-X github.com/prometheus/common/version.Version="+testVersion, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building loadprobe:", err)
			return 1
		}
		return m.Run()
	}())
}

// loadprobe runs the binary with args and returns its exit code and output.
func loadprobe(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return loadprobeIn(t, "", "", args...)
}

// loadprobeIn runs the binary in dir ("": here) with stdin on its standard
// input.
func loadprobeIn(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

func TestConfigCheck(t *testing.T) {
	example := filepath.Join("examples", "loadprobe.yml")
	code, stdout, stderr := loadprobe(t, "--config.check", "--config.file="+example)
	if code != 0 {
		t.Errorf("--config.check on %s: exit %d, want 0\n%s%s", example, code, stdout, stderr)
	}
	testkit.Contains(t, "the output of a good check", stdout, example, "valid")

	// Every bad config of the config package's tests: exit 1, the file and
	// the line named.
	bads, err := filepath.Glob(filepath.Join("config", "testdata", "bad", "*.yml"))
	if err != nil || len(bads) < 25 {
		t.Fatalf("%d bad configs in config/testdata/bad (%v), want at least 25", len(bads), err)
	}
	for _, bad := range bads {
		code, _, stderr := loadprobe(t, "--config.check", "--config.file="+bad)
		if code != 1 || !regexp.MustCompile(regexp.QuoteMeta(bad)+`:\d+: `).MatchString(stderr) {
			t.Errorf("--config.check on %s: exit %d, stderr %q; want 1 and %s:LINE:", bad, code, stderr, bad)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.yml")
	testkit.WriteFile(t, bad, testkit.BadConfig)
	code, stdout, stderr = loadprobe(t, "--config.check", "--config.file="+bad)
	if code != 1 {
		t.Errorf("--config.check on a bad config: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	testkit.Contains(t, "stderr of a bad check", stderr, bad+":4:")

	code, _, stderr = loadprobe(t, "--config.check", "--config.file="+filepath.Join(t.TempDir(), "missing.yml"))
	if code != 1 {
		t.Errorf("--config.check on a missing file: exit %d, want 1\n%s", code, stderr)
	}
}

func TestVersionAndUsage(t *testing.T) {
	code, stdout, stderr := loadprobe(t, "--version")
	if code != 0 {
		t.Errorf("--version: exit %d, want 0\n%s", code, stderr)
	}
	testkit.Contains(t, "--version", stdout, "loadprobe, version "+testVersion, "go version:")

	code, _, stderr = loadprobe(t, "--no-such-flag")
	if code != 2 {
		t.Errorf("an unknown flag: exit %d, want 2", code)
	}
	testkit.Contains(t, "stderr of an unknown flag", stderr, "no-such-flag")

	code, stdout, _ = loadprobe(t, "--help")
	if code != 0 {
		t.Errorf("--help: exit %d, want 0", code)
	}
	testkit.Contains(t, "--help", stdout, "--config.file", "config.check", "--web.listen-address=:10471",
		"--web.config.file", "web.enable-lifecycle", "--log.level", "--log.format")
}

// TestProcess runs the daemon as a process: it serves, reloads on a real
// SIGHUP and exits 0 soon after SIGTERM.
func TestProcess(t *testing.T) {
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, testkit.GoodConfig)
	d := startDaemon(t, exec.Command(binary, "--config.file="+file, "--web.listen-address=127.0.0.1:0"))
	get := func(path string) string {
		_, body := d.get(t, path)
		return body
	}
	testkit.Contains(t, "/metrics", get("/metrics"), `loadprobe_build_info{branch="",goarch=`, `version="`+testVersion+`"`)

	testkit.WriteFile(t, file, testkit.OtherConfig)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the SIGHUP reload", func() bool { return strings.Contains(get("/config"), "name: other") })

	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !d.wait(2 * time.Second) {
		t.Fatal("loadprobe did not exit within 2s of SIGTERM")
	}
	if !d.cmd.ProcessState.Success() {
		t.Errorf("loadprobe after SIGTERM: %v, want exit 0", d.cmd.ProcessState)
	}
}
