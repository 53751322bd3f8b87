package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

var (
	stepStarted = desc(StepStartedName,
		"Unix time at which the step's load began: the replicas of a fleet start each step together, and replica 0 reads a shard's step as part of its run by it.", probeLevelL...)
	stepShare = desc(StepShareName,
		"This replica's share of the step's level (--shard): connections or requests per second it sent of the fleet's level.", probeLevelL...)

	fleetBreakingLevel = desc(namespace+"_fleet_breaking_point_level",
		"Fleet level at which a breaking-point rule fired in the fleet's last run, summed over its shards; absent when the rule never fired or a shard was missing. Exported by the replica with ordinal 0.", "probe", "rule")
	fleetBreakingThroughput = desc(namespace+"_fleet_breaking_point_throughput",
		"The fleet's goodput at the level where the rule fired in its last run, in successful responses per second.", "probe", "rule")
	fleetPeak = desc(namespace+"_fleet_peak_throughput",
		"Highest goodput of the fleet's last run, summed over its shards; absent when the run has a problem (a shard missing or twice, Prometheus unreadable).", probeL...)
	fleetCapacityLevel = desc(namespace+"_fleet_capacity_level",
		"Highest fleet level of the last run within the latency and error budgets; absent when none was or a shard was missing.", probeL...)
	fleetCapacityThroughput = desc(namespace+"_fleet_capacity_throughput",
		"The fleet's goodput at its capacity level, in successful responses per second; absent when a shard was missing, never a lower figure.", probeL...)
	fleetRunValid = desc(namespace+"_fleet_run_valid",
		"1 when every shard took part in every level of the fleet's last run and the summed run held its load, else 0.", probeL...)
	fleetReplicas = desc(namespace+"_fleet_replicas",
		"Shards found at every level of the fleet's last run.", probeL...)
	fleetShardComplete = desc(namespace+"_fleet_shard_complete",
		"1 when the shard took part in every level of the fleet's last run, 0 when it was missing, dead or late at one level or more.", "probe", "shard")
	fleetSkew = desc(namespace+"_fleet_step_start_skew_seconds",
		"Largest spread of one step's start across the shards in the fleet's last run: how closely the replicas stepped together.", probeL...)
)

// fleetCollector exports, for a replica of a fleet, when each step started
// and its share of the level, and on the replica that reads the fleet's
// runs back, the fleet's figures (result.Fleet).
type fleetCollector struct {
	src   Source
	shard fleet.Shard
}

// RegisterFleet registers the fleet families on reg, read from src at
// scrape time, for shard sh.
func RegisterFleet(reg prometheus.Registerer, src Source, sh fleet.Shard) {
	reg.MustRegister(&fleetCollector{src: src, shard: sh})
}

func (fc *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{stepStarted, stepShare, fleetBreakingLevel, fleetBreakingThroughput, fleetPeak,
		fleetCapacityLevel, fleetCapacityThroughput, fleetRunValid, fleetReplicas, fleetShardComplete, fleetSkew} {
		ch <- d
	}
}

func (fc *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, ps := range fc.src.Snapshot() {
		// The same run's steps as the other step series (results.go).
		steps := ps.Current
		if steps == nil || len(steps.Steps) == 0 {
			steps = ps.Last
		}
		if steps != nil {
			fc.collectSteps(ch, ps.Probe, steps.Steps)
		}
		if ps.Last != nil && ps.Last.Fleet != nil {
			collectFleet(ch, ps.Probe.Name, ps.Last.Fleet)
		}
	}
}

func (fc *fleetCollector) collectSteps(ch chan<- prometheus.Metric, p *plan.Probe, steps []result.Step) {
	seen := make(map[string]bool, len(steps))
	for i := len(steps) - 1; i >= 0; i-- { // the later of two steps at one level wins, as in results.go
		s := steps[i]
		level := plan.FormatLevel(s.Level)
		if seen[level] {
			continue
		}
		seen[level] = true
		if !s.Started.IsZero() {
			gauge(ch, stepStarted, float64(s.Started.UnixNano())/1e9, p.Name, level)
		}
		share := fc.shard.Rate(s.Level)
		if p.Load.Mode().ClosedLoop() {
			share = float64(fc.shard.Connections(int(s.Level)))
		}
		gauge(ch, stepShare, share, p.Name, level)
	}
}

func collectFleet(ch chan<- prometheus.Metric, name string, f *result.Fleet) {
	for _, rule := range result.Rules {
		if p := f.BreakingPoints.Of(rule); p != nil {
			gauge(ch, fleetBreakingLevel, p.Level, name, string(rule))
			gauge(ch, fleetBreakingThroughput, p.Throughput, name, string(rule))
		}
	}
	if len(f.Problems) == 0 { // judged: no shard missing, none twice
		gauge(ch, fleetPeak, f.PeakThroughput, name)
	}
	if f.Capacity != nil {
		gauge(ch, fleetCapacityLevel, f.Capacity.Level, name)
		gauge(ch, fleetCapacityThroughput, f.Capacity.Throughput, name)
	}
	gauge(ch, fleetRunValid, boolValue(f.Valid), name)
	gauge(ch, fleetReplicas, float64(f.Replicas), name)
	gauge(ch, fleetSkew, f.StepStartSkewSeconds, name)
	missing := map[int]bool{}
	for _, i := range f.MissingShards {
		missing[i] = true
	}
	for i := range f.Shards {
		gauge(ch, fleetShardComplete, boolValue(!missing[i]), name, strconv.Itoa(i))
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
