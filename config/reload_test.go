package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/promslog"

	"github.com/loadprobe/loadprobe/fleet"
)

func TestReloadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "loadprobe.yml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	good := func(name string) string {
		return "allowed_targets: [127.0.0.1]\nprobes:\n  - name: " + name +
			"\n    request: {url: 'http://127.0.0.1:8080/'}\n    load: {concurrency: [1, 2]}\n"
	}

	reg := prometheus.NewPedanticRegistry()
	sc := NewSafeConfig(reg)
	logger := promslog.NewNopLogger()
	success := func() float64 { return testutil.ToFloat64(sc.configReloadSuccess) }
	stamp := func() float64 { return testutil.ToFloat64(sc.configReloadSeconds) }

	write(good("first"))
	if err := sc.ReloadConfig(file, logger); err != nil {
		t.Fatal(err)
	}
	if success() != 1 || stamp() <= 0 {
		t.Errorf("after a good load: success %g, timestamp %g", success(), stamp())
	}
	first := sc.Get()
	if _, ok := first.Probe("first"); !ok {
		t.Fatalf("first config not loaded: %v", first)
	}
	firstStamp := stamp()

	write(good("second") + "    rules: {knee_fraction: 2}\n")
	err := sc.ReloadConfig(file, logger)
	want := file + ":6: probes[0].rules.knee_fraction: must be in (0, 1] (got 2)"
	if err == nil || err.Error() != want {
		t.Errorf("bad reload: got %v, want %s", err, want)
	}
	if success() != 0 || stamp() != firstStamp {
		t.Errorf("after a bad load: success %g, timestamp %g (was %g)", success(), stamp(), firstStamp)
	}
	if sc.Get() != first {
		t.Errorf("a bad reload replaced the running config")
	}

	write(good("third"))
	if err := sc.ReloadConfig(file, logger); err != nil {
		t.Fatal(err)
	}
	if success() != 1 || stamp() < firstStamp {
		t.Errorf("after a good reload: success %g, timestamp %g", success(), stamp())
	}
	if _, ok := sc.Get().Probe("third"); !ok {
		t.Errorf("third config not loaded")
	}

	// Both gauges are exposed under their contract names.
	expected := `
# HELP loadprobe_config_last_reload_successful Whether the last configuration reload attempt was successful.
# TYPE loadprobe_config_last_reload_successful gauge
loadprobe_config_last_reload_successful 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), "loadprobe_config_last_reload_successful"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "loadprobe_config_last_reload_success_timestamp_seconds"); err != nil || n != 1 {
		t.Errorf("timestamp gauge: %d series, %v", n, err)
	}

	// A missing file is a failed reload too.
	if err := sc.ReloadConfig(filepath.Join(dir, "missing.yml"), nil); err == nil || success() != 0 {
		t.Errorf("missing file: err %v, success %g", err, success())
	}
}

// A replica of a fleet keeps its running config when a reload brings a
// search, which a fleet cannot run.
func TestReloadOnAFleetRefusesASearch(t *testing.T) {
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	probe := "allowed_targets: [127.0.0.1]\nprobes:\n  - name: work\n    request: {url: 'http://127.0.0.1:8080/'}\n    load: "
	sc := NewSafeConfig(nil)
	sc.Shard = fleet.Shard{Index: 0, Count: 2}
	if err := os.WriteFile(file, []byte(probe+"{concurrency: [1, 2]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sc.ReloadConfig(file, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(probe+"{search: {concurrency: {from: 1, max: 8}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := sc.ReloadConfig(file, nil)
	if err == nil || !strings.Contains(err.Error(), file+":5: probes[0].load.search: a fleet (--shard 0/2) searches by reading every shard's steps from the fleet's Prometheus, and this replica has no --fleet.prometheus-url") {
		t.Errorf("reload: %v, want the search refused with its line", err)
	}
	if p, _ := sc.Get().Probe("work"); p.Load.Search != nil {
		t.Error("the search replaced the running config")
	}
}
