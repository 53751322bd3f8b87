package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

func TestShardFlagRejectsABadValueAsAUsageError(t *testing.T) {
	tests := []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--shard=3/3"}, "", "the replica index 3 must be below the replica count 3"},
		{[]string{"run", "--shard=1/0"}, "", "the replica count N must be a whole number of at least 1"},
		{[]string{"run", "--shard=1"}, "", `"1" is not i/N`},
		{[]string{"--shard=ordinal/3"}, "", "has no pod ordinal"}, // the test machine is no StatefulSet pod
		{[]string{"run"}, "LOADPROBE_SHARD=-1/3", "must be a whole number from 0"},
	}
	for _, tt := range tests {
		cmd := exec.Command(binary, append(tt.args, "--config.file="+filepath.Join("examples", "loadprobe.yml"))...)
		cmd.Env = append(os.Environ(), tt.env)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 {
			t.Errorf("%v %s: exit %d (%v), want 2\n%s", tt.args, tt.env, code, err, out)
		}
		testkit.Contains(t, fmt.Sprint(tt.args, tt.env), string(out), "--shard", tt.want)
	}
}

// shardTarget is a /work ramp of one level, 12 connections, against a pool of
// 12 workers: replica 1 of 3 sends 4 of them. It runs continuously: a
// fleet's replica starts its runs on boundaries of the schedule, and a
// continuous probe's come every aligned run length (1.5s), not every hour.
func shardTarget(t *testing.T) (configFile string) {
	t.Helper()
	srv := httptest.NewServer(target.New(target.Options{Workers: 12, WorkTime: 10 * time.Millisecond}))
	t.Cleanup(srv.Close)
	configFile = filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, configFile, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "%s/work"}
    load: {concurrency: [12], step_duration: 1s, warmup: 100ms}
    schedule: {continuous: true}
`, srv.URL))
	return configFile
}

func TestRunSendsTheShardsShare(t *testing.T) {
	code, stdout, stderr := loadprobe(t, "run", "--shard=1/3", "--output=json", "--config.file="+shardTarget(t))
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, stderr)
	}
	var out struct{ Probes []result.Result }
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Probes) != 1 || len(out.Probes[0].Steps) != 1 {
		t.Fatalf("want one probe of one step: %v\n%s", err, stdout)
	}
	s := out.Probes[0].Steps[0]
	if s.Level != 12 || math.Abs(s.InFlight-4) > 0.6 {
		t.Errorf("level %g with %.2f in flight; want the fleet's level 12 and the share 4 in flight", s.Level, s.InFlight)
	}
}

// The daemon as a fleet's replica 1 of 3: it says so on /metrics, holds 4
// of the 12 connections, and exports its step at the fleet's level 12.
func TestDaemonSendsTheShardsShare(t *testing.T) {
	cmd := exec.Command(binary, "--config.file="+shardTarget(t), "--web.listen-address=127.0.0.1:0")
	cmd.Env = append(os.Environ(), "LOADPROBE_SHARD=1/3")
	d := startDaemon(t, cmd)
	scrape := func() string {
		_, m := d.get(t, "/metrics")
		return m
	}
	held := false
	testkit.WaitFor(t, "the step at level 12", func() bool {
		m := scrape()
		held = held || strings.Contains(m, `loadprobe_concurrency{probe="work"} 4`+"\n")
		return strings.Contains(m, `loadprobe_step_in_flight{level="12",probe="work"}`)
	})
	m := scrape()
	if !regexp.MustCompile(`loadprobe_shard_info\{config_hash="[0-9a-f]{16}",shard="1",shards="3"\} 1`).MatchString(m) {
		t.Errorf("/metrics has no loadprobe_shard_info of shard 1 of 3 with its config's hash:\n%s", m)
	}
	if !held {
		t.Error(`loadprobe_concurrency{probe="work"} never read 4 while the step ran`)
	}
	if got := testkit.MetricValue(t, m, `loadprobe_step_in_flight{level="12",probe="work"}`); math.Abs(got-4) > 0.6 {
		t.Errorf("Little's law at level 12: %.2f in flight, want the share 4", got)
	}
}
