package daemon

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/promslog"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/internal/testkit"
)

// The fleet flags are read when the daemon is built: an HTTP client
// configuration that does not load stops it at start, naming the flag;
// so does a --fleet.selector that does not parse (braces, an unquoted
// value), on every replica, since each reads its peers' guards there; a
// good one starts.
func TestFleetFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "client.yml")
	testkit.WriteFile(t, good, "basic_auth: {username: fleet, password: secret}\n")
	bad := filepath.Join(dir, "bad.yml")
	testkit.WriteFile(t, bad, "basic_auth: {username: fleet, pasword: secret}\n")
	cfg := filepath.Join(dir, "loadprobe.yml")
	testkit.WriteFile(t, cfg, "allowed_targets: [127.0.0.1]\nprobes: []\n")
	for _, tc := range []struct {
		shard    fleet.Shard
		file     string
		selector string
		wantErr  string
	}{
		{fleet.Shard{Index: 0, Count: 3}, good, `job="loadprobe"`, ""},
		{fleet.Shard{Index: 0, Count: 3}, bad, "", "--fleet.http-config.file"},
		{fleet.Shard{Index: 0, Count: 3}, filepath.Join(dir, "missing.yml"), "", "--fleet.http-config.file"},
		{fleet.Shard{Index: 0, Count: 3}, good, `{job="loadprobe"}`, `--fleet.selector "{job=\"loadprobe\"}": write the label matchers without braces`},
		{fleet.Shard{Index: 0, Count: 3}, good, `job=loadprobe`, `--fleet.selector "job=loadprobe": label job`},
		{fleet.Shard{Index: 1, Count: 3}, good, `job="loadprobe"`, ""},
		{fleet.Shard{Index: 1, Count: 3}, bad, "", "--fleet.http-config.file"},
	} {
		_, err := New(Options{
			ConfigFile: cfg, Shard: tc.shard, Logger: promslog.NewNopLogger(),
			Fleet: FleetOptions{PrometheusURL: "http://127.0.0.1:9090", HTTPConfigFile: tc.file, Selector: tc.selector},
		})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("shard %s, %s: %v, want a daemon", tc.shard, filepath.Base(tc.file), err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("shard %s, %s: error %v, want one naming %s", tc.shard, filepath.Base(tc.file), err, tc.wantErr)
		}
	}
}
