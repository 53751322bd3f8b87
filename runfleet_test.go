package main

import (
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/daemon"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/result"
)

// A run is a replica of a one-shot fleet with a shard of more than one and
// the fleet's Prometheus, and then must serve its metrics; an address to
// serve on without a fleet is refused too, naming what it needs.
func TestOneShotFleetFlags(t *testing.T) {
	prom := daemon.FleetOptions{PrometheusURL: "http://127.0.0.1:9090"}
	for _, tc := range []struct {
		name    string
		shard   fleet.Shard
		fleet   daemon.FleetOptions
		listen  string
		want    bool   // a one-shot fleet
		wantErr string // a part of the error
	}{
		{"alone", fleet.Shard{Index: 0, Count: 1}, daemon.FleetOptions{}, "", false, ""},
		{"a shard alone", fleet.Shard{Index: 1, Count: 3}, daemon.FleetOptions{}, "", false, ""},
		{"a replica", fleet.Shard{Index: 1, Count: 3}, prom, "127.0.0.1:0", true, ""},
		{"a replica that serves nothing", fleet.Shard{Index: 0, Count: 3}, prom, "", false, "needs --web.listen-address"},
		{"serving without a fleet", fleet.Shard{Index: 0, Count: 1}, prom, "127.0.0.1:0", false, "needs --shard i/N (N > 1) and --fleet.prometheus-url"},
		{"a selector in braces", fleet.Shard{Index: 0, Count: 3}, daemon.FleetOptions{PrometheusURL: prom.PrometheusURL, Selector: `{job="x"}`}, "127.0.0.1:0", false, "--fleet.selector"},
	} {
		fl, err := newOneShot(tc.shard, tc.fleet, tc.listen)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case (fl != nil) != tc.want:
			t.Errorf("%s: one-shot fleet %v, want %v", tc.name, fl != nil, tc.want)
		}
	}
}

// Replica 0 exits by the fleet's runs: 1 when one misses a shard, was not
// judged, or falls short of an expectation; another replica exits 1 only
// when a run of its own failed.
func TestOneShotFleetExitCode(t *testing.T) {
	cfg, err := config.Parse("f.yml", []byte(`allowed_targets: [127.0.0.1]
probes:
  - name: work
    request: {url: "http://127.0.0.1:8080/"}
    load: {concurrency: [3, 6], step_duration: 1s}
    expect: {min_capacity: 150}
`))
	if err != nil {
		t.Fatal(err)
	}
	probes := cfg.Plans()
	share := result.Result{Ended: result.ResultCompleted, Capacity: &result.Point{Level: 6, Throughput: 80}}
	withFleet := func(f result.Fleet) result.Result {
		r := share
		r.Fleet = &f
		return r
	}
	met := result.Fleet{Shards: 3, Replicas: 3, Valid: true, MissingShards: []int{}, Capacity: &result.Point{Level: 6, Throughput: 240}}
	missing := met
	missing.Replicas, missing.MissingShards, missing.Capacity, missing.Valid = 2, []int{2}, nil, false
	short := met
	short.Capacity = &result.Point{Level: 6, Throughput: 120}
	failed := share
	failed.Ended = result.ResultFailed
	for _, tc := range []struct {
		name  string
		index int
		r     result.Result
		want  int
	}{
		{"replica 0, the fleet's capacity met", 0, withFleet(met), exitOK},
		{"replica 0, a shard missing", 0, withFleet(missing), exitExpect},
		{"replica 0, the fleet's capacity short", 0, withFleet(short), exitExpect},
		{"replica 0, not judged", 0, share, exitExpect},
		{"replica 1, its share ran", 1, share, exitOK},
		{"replica 1, its run failed", 1, failed, exitExpect},
	} {
		fl := &oneShot{shard: fleet.Shard{Index: tc.index, Count: 3}}
		if got := fl.code(probes, []result.Result{tc.r}); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}
