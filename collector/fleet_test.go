package collector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// Every replica exports when each step started and its share of the level
// (10 connections over 3: 4 for shard 0); replica 0 exports the fleet's
// figures, and a fleet with a shard missing only its validity, replicas
// and which shard: no lower figure.
func TestFleetFamilies(t *testing.T) {
	p := probeConfig("work", 0)
	p.Load = plan.Load{Concurrency: []int{5, 10}}
	s5, s10 := step(5, 100), step(10, 200)
	s5.Started = time.Unix(1700000000, 0)
	s10.Started = time.Unix(1700000003, 500_000_000)
	whole := &result.Fleet{
		Shards: 3, Replicas: 3, Valid: true, PeakThroughput: 600, StepStartSkewSeconds: 0.004,
		BreakingPoints: result.BreakingPoints{Knee: &result.Point{Level: 10, Throughput: 600}},
		Capacity:       &result.Point{Level: 10, Throughput: 600},
	}
	missing := &result.Fleet{Shards: 3, Replicas: 2, MissingShards: []int{2}, Problems: []string{"shard 2 of 3 has no step"}}
	// A shard sent twice: every shard is there, but the run is not judged.
	twice := &result.Fleet{Shards: 3, Replicas: 3, MissingShards: []int{}, Problems: []string{"shard 1 of 3 runs twice"}}
	for _, tc := range []struct {
		name  string
		fleet *result.Fleet
		want  string
	}{
		{"whole", whole, `
loadprobe_fleet_breaking_point_level{probe="work",rule="knee"} 10
loadprobe_fleet_breaking_point_throughput{probe="work",rule="knee"} 600
loadprobe_fleet_capacity_level{probe="work"} 10
loadprobe_fleet_capacity_throughput{probe="work"} 600
loadprobe_fleet_peak_throughput{probe="work"} 600
loadprobe_fleet_replicas{probe="work"} 3
loadprobe_fleet_run_valid{probe="work"} 1
loadprobe_fleet_shard_complete{probe="work",shard="0"} 1
loadprobe_fleet_shard_complete{probe="work",shard="1"} 1
loadprobe_fleet_shard_complete{probe="work",shard="2"} 1
loadprobe_fleet_step_start_skew_seconds{probe="work"} 0.004
`},
		{"missing", missing, `
loadprobe_fleet_replicas{probe="work"} 2
loadprobe_fleet_run_valid{probe="work"} 0
loadprobe_fleet_shard_complete{probe="work",shard="0"} 1
loadprobe_fleet_shard_complete{probe="work",shard="1"} 1
loadprobe_fleet_shard_complete{probe="work",shard="2"} 0
loadprobe_fleet_step_start_skew_seconds{probe="work"} 0
`},
		{"a shard twice", twice, `
loadprobe_fleet_replicas{probe="work"} 3
loadprobe_fleet_run_valid{probe="work"} 0
loadprobe_fleet_shard_complete{probe="work",shard="0"} 1
loadprobe_fleet_shard_complete{probe="work",shard="1"} 1
loadprobe_fleet_shard_complete{probe="work",shard="2"} 1
loadprobe_fleet_step_start_skew_seconds{probe="work"} 0
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			src := &fakeSource{}
			src.set(state.Probe{Probe: p, Last: &result.Result{Name: "work", Steps: []result.Step{s5, s10}, Fleet: tc.fleet}})
			RegisterFleet(reg, src, fleet.Shard{Index: 0, Count: 3})
			steps := `
loadprobe_step_share{level="10",probe="work"} 4
loadprobe_step_share{level="5",probe="work"} 2
loadprobe_step_started_timestamp_seconds{level="10",probe="work"} 1.7000000035e+09
loadprobe_step_started_timestamp_seconds{level="5",probe="work"} 1.7e+09
`
			if err := compareValues(reg, strings.TrimSpace(tc.want)+steps); err != nil {
				t.Error(err)
			}
			if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}
}

// compareValues compares the gathered samples, without HELP and TYPE
// lines, with want (sorted as the exposition sorts them).
func compareValues(reg prometheus.Gatherer, want string) error {
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	var lines []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %g", mf.GetName(), strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	if got := strings.Join(lines, "\n"); got != strings.TrimSpace(want) {
		return fmt.Errorf("got\n%s\nwant\n%s", got, strings.TrimSpace(want))
	}
	return nil
}
