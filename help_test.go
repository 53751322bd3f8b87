package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// TestCommandHelpShowsItsOwnFlagsFirst: each command's --help starts with
// the flags it reads, and leaves out the daemon's it would ignore; the
// top-level usage says that no command is the daemon.
func TestCommandHelpShowsItsOwnFlagsFirst(t *testing.T) {
	daemonOnly := []string{"--web.listen-address", "--fleet.prometheus-url", "--web.enable-lifecycle", "--storage.path"}
	tests := []struct {
		args      []string
		firstRows int // lines of the usage that must hold want
		want      []string
		lacks     []string
	}{
		// A one-shot fleet's replica serves its metrics and reads its peers.
		{[]string{"run", "--help"}, 70, []string{"usage: loadprobe run", "--config.file", "--probe", "--output", "--shard", "--url", "--concurrency", "--search", "--header",
			"--fleet.prometheus-url", "--web.listen-address"}, []string{"--web.enable-lifecycle", "--storage.path"}},
		{[]string{"target", "--help"}, 10, []string{"usage: loadprobe target", "--listen", "--workers", "--work-time", "--work="}, append(daemonOnly, "--config.file")},
		{[]string{"demo", "--help"}, 12, []string{"usage: loadprobe demo", "127.0.0.1:10471", "--web.listen-address=127.0.0.1:10471"}, []string{"--config.file", "--fleet.", "--shard"}},
		{[]string{"--help"}, 12, []string{"usage: loadprobe [<flags>]", "With no command, loadprobe is the daemon", "Daemon flags (no command):", "--config.file"}, nil},
		// The daemon's own --help, as when its flags come first.
		{[]string{"--config.file=x.yml", "--help"}, 12, []string{"usage: loadprobe [<flags>]", "With no command, loadprobe is the daemon"}, nil},
	}
	for _, tt := range tests {
		code, stdout, stderr := loadprobe(t, tt.args...)
		if code != 0 {
			t.Errorf("%v: exit %d, want 0\n%s", tt.args, code, stderr)
		}
		lines := strings.SplitAfter(stdout, "\n")
		head := strings.Join(lines[:min(tt.firstRows, len(lines))], "")
		testkit.Contains(t, strings.Join(tt.args, " ")+" (its first lines)", head, tt.want...)
		testkit.Lacks(t, strings.Join(tt.args, " "), stdout, tt.lacks...)
	}
	// Every command is listed, the daemon as the mode without one.
	_, stdout, _ := loadprobe(t, "--help")
	testkit.Contains(t, "--help's commands", stdout, "\n  run [<flags>]", "\n  target [<flags>]", "\n  demo [<flags>]",
		"--web.listen-address=:10471", "--fleet.wait", "--log.level")
}

// TestDaemonFlagsComeWithoutACommand: the daemon's flags, given without a
// command, run the daemon's modes; a command does not take the daemon's.
func TestDaemonFlagsComeWithoutACommand(t *testing.T) {
	one := filepath.Join(t.TempDir(), "one.yml")
	testkit.WriteFile(t, one, `allowed_targets: [127.0.0.1]
probes:
  - name: one
    request: {url: "http://127.0.0.1:8080/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
`)
	code, stdout, stderr := loadprobe(t, "--log.level=warn", "--config.check", "--config.file="+one)
	if code != 0 || stdout != one+" is valid: 1 probe\n" {
		t.Errorf("--config.check on one probe: exit %d, stdout %q (want %q)\n%s", code, stdout, one+" is valid: 1 probe\n", stderr)
	}
	code, _, stderr = loadprobe(t, "run", "--config.check", "--config.file="+one)
	if code != 2 {
		t.Errorf("run --config.check: exit %d, want 2 (run takes no daemon flag)\n%s", code, stderr)
	}
	testkit.Contains(t, "run --config.check's error", stderr, "--config.check")
}

func TestDemoListensOnLoopbackByDefault(t *testing.T) {
	c := newCommands()
	cmd, err := c.app.Parse([]string{"demo"})
	if err != nil || cmd != "demo" {
		t.Fatalf("parse demo: %q, %v", cmd, err)
	}
	if got := *c.demoFlags.web.WebListenAddresses; len(got) != 1 || got[0] != "127.0.0.1:10471" {
		t.Errorf("demo listens on %q by default, want [127.0.0.1:10471]", got)
	}
	if _, err := c.app.Parse(nil); err != nil || (*c.daemonFlags.web.WebListenAddresses)[0] != ":10471" {
		t.Errorf("the daemon listens on %q by default (%v), want :10471", *c.daemonFlags.web.WebListenAddresses, err)
	}

	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	tests := []struct {
		addrs []net.Addr
		want  string
	}{
		{[]net.Addr{tcp("127.0.0.1:10471")}, "127.0.0.1:10471, loopback only"},
		{[]net.Addr{tcp("[::1]:10471"), tcp("127.0.0.1:10471")}, "[::1]:10471, 127.0.0.1:10471, loopback only"},
		{[]net.Addr{tcp("[::]:10471")}, "[::]:10471, reachable from other hosts"},
		{[]net.Addr{tcp("127.0.0.1:10471"), tcp("192.0.2.1:10471")}, "reachable from other hosts"},
	}
	for _, tt := range tests {
		testkit.Contains(t, "the banner's listening line", reach(tt.addrs), tt.want)
	}
}
