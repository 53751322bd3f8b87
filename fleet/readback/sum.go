package readback

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// sum adds up the shards' parts at every level replica 0 ran (own's
// steps), and judges the sums with p's rules when every shard took part.
//
// A shard's step belongs to this run when it started within half a
// step_duration of replica 0's: its step series from an earlier run (a
// replica whose run started late, or not at all) started a whole run
// before, and count as missing. A rejected shard (its reason given)
// counts as missing at every level, with that reason for its problem.
func sum(p *plan.Probe, own result.Result, shards int, ps parts, rejected map[int]string) *result.Fleet {
	f := &result.Fleet{Shards: shards, Steps: []result.Step{}, MissingShards: []int{}, Problems: []string{}}
	tolerance := time.Duration(p.Load.StepDuration).Seconds() / 2
	missing := make([][]string, shards)
	native, measured := true, false
	for _, s := range own.Steps {
		level := plan.FormatLevel(s.Level)
		ownStart := float64(s.Started.UnixNano()) / 1e9
		var found []*part
		for i := range shards {
			pt := ps[i][level]
			if _, out := rejected[i]; out || pt == nil || math.Abs(pt.started-ownStart) > tolerance {
				missing[i] = append(missing[i], level)
				continue
			}
			found = append(found, pt)
		}
		step, skew, fromNative := merge(p, s, found)
		if step.Succeeded() > 0 {
			measured, native = true, native && fromNative
		}
		f.Steps = append(f.Steps, step)
		f.StepStartSkewSeconds = max(f.StepStartSkewSeconds, skew)
	}
	unit := own.Words().Unit()
	for i, levels := range missing {
		if len(levels) == 0 {
			continue
		}
		f.MissingShards = append(f.MissingShards, i)
		if why, out := rejected[i]; out {
			f.Problems = append(f.Problems, why)
			continue
		}
		f.Problems = append(f.Problems, fmt.Sprintf("shard %d of %d has no step in this run at %s %s: missing, dead or late during the run, so the fleet's sums lack its share",
			i, shards, unit, strings.Join(levels, ", ")))
	}
	switch {
	case measured && native:
		f.LatencySource = result.LatencyNative
	case measured:
		f.LatencySource = result.LatencySummaries
	}
	return conclude(p, own, f)
}

// Join is the fleet's run of p made of the steps read one at a time while
// it ran (a fleet's search, Reader.Step), own being this replica's run:
// judged as Judge judges a run read back whole. A level a search measured
// twice keeps both readings, as own does, where a run read back whole
// could only find the last.
func (*Reader) Join(p *plan.Probe, own result.Result, reads []*result.Fleet) *result.Fleet {
	f := &result.Fleet{Steps: []result.Step{}, MissingShards: []int{}, Problems: []string{}}
	missing := map[int]bool{}
	sources := map[result.LatencySource]bool{}
	for _, read := range reads {
		f.Shards = read.Shards
		f.Steps = append(f.Steps, read.Steps...)
		f.Problems = append(f.Problems, read.Problems...)
		f.StepStartSkewSeconds = max(f.StepStartSkewSeconds, read.StepStartSkewSeconds)
		for _, i := range read.MissingShards {
			if !missing[i] {
				missing[i] = true
				f.MissingShards = append(f.MissingShards, i)
			}
		}
		sources[read.LatencySource] = true
	}
	slices.Sort(f.MissingShards)
	switch {
	case sources[result.LatencySummaries]:
		f.LatencySource = result.LatencySummaries
	case sources[result.LatencyNative]:
		f.LatencySource = result.LatencyNative
	}
	return conclude(p, own, f)
}

// conclude counts the shards found at every level of f and, when none is
// missing and nothing went wrong, judges f's steps with p's rules.
func conclude(p *plan.Probe, own result.Result, f *result.Fleet) *result.Fleet {
	f.Replicas = f.Shards - len(f.MissingShards)
	if len(f.MissingShards) > 0 || len(f.Problems) > 0 {
		return f // no figure a missing share would lower
	}
	r := result.Result{Name: p.Name, Mode: own.Mode, Protocol: own.Protocol, Steps: f.Steps}
	analysis.Analyze(&r, p.Rules)
	f.PeakThroughput, f.BreakingPoints, f.ReachedUpTo, f.Capacity, f.Valid = r.PeakThroughput, r.BreakingPoints, r.ReachedUpTo, r.Capacity, r.Valid
	return f
}

// merge sums the shards' parts of one step into the fleet's step; own is
// replica 0's step at that level. It returns the step, the spread of the
// parts' starts, in seconds, and whether its latency quantiles are the
// native histograms' (else the summaries' mixture).
func merge(p *plan.Probe, own result.Step, found []*part) (s result.Step, skew float64, native bool) {
	s = result.Step{
		Level: own.Level, Name: own.Name, DurationSeconds: own.DurationSeconds,
		Responses: result.Codes{}, HTTPErrors: result.Codes{}, Errors: map[string]int64{}, PerSecond: []result.Second{},
	}
	var failed int64
	var count, latencySum, share, heldShare float64
	first, last := math.Inf(1), math.Inf(-1)
	for _, pt := range found {
		s.Throughput += pt.throughput
		s.Goodput += pt.goodput
		s.InFlight += pt.inFlight
		// The busiest replica's generator: one saturated shard is enough to
		// make the fleet's level the generators' rather than the target's.
		s.GeneratorCPURatio = max(s.GeneratorCPURatio, pt.cpu)
		for code, v := range pt.responses {
			n := int64(math.Round(v))
			s.Responses[code] += n
			s.Attempts += n
			if !success(p, code) {
				s.HTTPErrors[code] += n
				failed += n
			}
		}
		for reason, v := range pt.errors {
			n := int64(math.Round(v))
			s.Errors[reason] += n
			s.Attempts += n
			failed += n
		}
		count += pt.count
		latencySum += pt.sum
		share += pt.share
		heldShare += pt.held * pt.share
		first, last = min(first, pt.started), max(last, pt.started)
	}
	if len(found) == 0 {
		return s, 0, false
	}
	if s.Attempts > 0 {
		s.ErrorRatio = float64(failed) / float64(s.Attempts)
	}
	if share > 0 {
		// Each shard's held load over its share of the level: the
		// generators' view, as on one replica (docs/measurement.md).
		s.LoadHeldRatio = heldShare / share
	}
	if count > 0 {
		s.Latency = mixture(found)
		if l, ok := nativeLatency(found); ok {
			l.Max, native = s.Latency.Max, true
			s.Latency = l
		}
		s.Latency.Mean = latencySum / count
	}
	s.Started = time.Unix(0, int64(first*1e9))
	return s, last - first, native
}

// success reports whether a response of code is one of p's successes: OK
// for a gRPC probe, a valid status code for HTTP; never CodeOther, which
// the shards' series bound a target's rare codes to.
func success(p *plan.Probe, code result.Code) bool {
	if p.Request.GRPC != nil {
		return code == result.GRPCStatus(0)
	}
	return code.Protocol == result.HTTP && p.Request.ValidCode(int(code.Number))
}
