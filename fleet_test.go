package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/promslog"

	"github.com/loadprobe/loadprobe/prober"
)

// The fleet flags are read when the daemon is built: an HTTP client
// configuration that does not load stops it at start, naming the flag;
// a good one, or a replica other than 0 (which reads nothing back), starts.
func TestFleetFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "client.yml")
	writeFile(t, good, "basic_auth: {username: fleet, password: secret}\n")
	bad := filepath.Join(dir, "bad.yml")
	writeFile(t, bad, "basic_auth: {username: fleet, pasword: secret}\n")
	cfg := filepath.Join(dir, "loadprobe.yml")
	writeFile(t, cfg, "allowed_targets: [127.0.0.1]\nprobes: []\n")
	for _, tc := range []struct {
		shard   prober.Shard
		file    string
		wantErr string
	}{
		{prober.Shard{Index: 0, Count: 3}, good, ""},
		{prober.Shard{Index: 0, Count: 3}, bad, "--fleet.http-config.file"},
		{prober.Shard{Index: 0, Count: 3}, filepath.Join(dir, "missing.yml"), "--fleet.http-config.file"},
		{prober.Shard{Index: 1, Count: 3}, bad, ""},
	} {
		_, err := NewDaemon(DaemonOptions{
			ConfigFile: cfg, Shard: tc.shard, Logger: promslog.NewNopLogger(),
			Fleet: FleetOptions{PrometheusURL: "http://127.0.0.1:9090", HTTPConfigFile: tc.file},
		})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("shard %s, %s: %v, want a daemon", tc.shard, filepath.Base(tc.file), err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("shard %s, %s: error %v, want one naming %s", tc.shard, filepath.Base(tc.file), err, tc.wantErr)
		}
	}
}
