package readback

import (
	"fmt"
	"math"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/result"
)

// target names one scraped replica: Prometheus gives every series of a
// scrape its job and instance.
type target struct{ job, instance string }

func targetOf(m model.Metric) target {
	return target{job: string(m[model.JobLabel]), instance: string(m[model.InstanceLabel])}
}

// shardsOf maps every replica that says it is a shard of this fleet
// (loadprobe_shard_info) to its shard. Two replicas that say they are one
// shard double its share: a problem, and neither counts. A shard whose
// config_hash is not shard 0's ran another config than the one replica 0
// judges with: rejected, with the reason.
func shardsOf(info model.Vector, shards int) (byTarget map[target]int, rejected map[int]string, problems []string) {
	byTarget, rejected = map[target]int{}, map[int]string{}
	claimed := map[int]target{}
	hashes := map[int]string{}
	for _, s := range info {
		i, err := strconv.Atoi(string(s.Metric["shard"]))
		if err != nil || i < 0 || i >= shards {
			continue
		}
		t := targetOf(s.Metric)
		if other, dup := claimed[i]; dup && other != t {
			problems = append(problems, fmt.Sprintf("shard %d of %d runs twice (%s and %s): its share of the load was sent twice", i, shards, other.instance, t.instance))
			delete(byTarget, other)
			continue
		}
		claimed[i] = t
		byTarget[t] = i
		hashes[i] = string(s.Metric[collector.ConfigHashLabel])
	}
	if own, ok := hashes[0]; ok {
		for i, h := range hashes {
			if h != own {
				rejected[i] = fmt.Sprintf("shard %d of %d runs another config than shard 0 (%s %q, shard 0's %q): the sum of two configs' loads is no fleet's run, so its share is left out",
					i, shards, collector.ConfigHashLabel, h, own)
			}
		}
	}
	return byTarget, rejected, problems
}

// part is one shard's step at one level, as its series say.
type part struct {
	throughput, goodput, inFlight, held, share float64
	cpu                                        float64 // generator_cpu_ratio of the shard's process
	started                                    float64 // Unix seconds; 0 when not exported
	count, sum                                 float64 // the latency summary's
	quantiles                                  map[float64]float64
	native                                     *model.SampleHistogram // nil without native histograms
	responses                                  map[result.Code]float64
	errors                                     map[string]float64
}

// parts holds every shard's steps by shard, then by level label.
type parts map[int]map[string]*part

func (ps parts) at(shard int, level string) *part {
	if ps[shard] == nil {
		ps[shard] = map[string]*part{}
	}
	p := ps[shard][level]
	if p == nil {
		p = &part{quantiles: map[float64]float64{}, responses: map[result.Code]float64{}, errors: map[string]float64{}}
		ps[shard][level] = p
	}
	return p
}

// gauges are the step families read as one number a shard, by name.
var gauges = map[model.LabelValue]func(*part) *float64{
	collector.StepThroughputName:         func(p *part) *float64 { return &p.throughput },
	collector.StepGoodputName:            func(p *part) *float64 { return &p.goodput },
	collector.StepInFlightName:           func(p *part) *float64 { return &p.inFlight },
	collector.StepLoadHeldName:           func(p *part) *float64 { return &p.held },
	collector.StepShareName:              func(p *part) *float64 { return &p.share },
	collector.StepGeneratorCPUName:       func(p *part) *float64 { return &p.cpu },
	collector.StepStartedName:            func(p *part) *float64 { return &p.started },
	collector.StepLatencyName + "_count": func(p *part) *float64 { return &p.count },
	collector.StepLatencyName + "_sum":   func(p *part) *float64 { return &p.sum },
}

// partsOf sorts the step series of the shards' replicas into parts;
// series of other replicas are no part of this fleet. A shard that
// exported a value that is not a finite number, where its figures need
// one, is rejected with the series named: one NaN would make every sum it
// enters NaN. A quantile is NaN where its step had no successful response
// (its count is 0): that is no value, not a bad one (latency.go).
func partsOf(steps model.Vector, shards map[target]int) (parts, map[int]string) {
	ps := parts{}
	rejected := map[int]string{}
	var quantiles []*model.Sample
	for _, s := range steps {
		shard, ok := shards[targetOf(s.Metric)]
		if !ok {
			continue
		}
		name := s.Metric[model.MetricNameLabel]
		switch {
		case name == collector.StepLatencyName:
			quantiles = append(quantiles, s)
			continue
		case name == collector.StepLatencyHistogramName && s.Histogram != nil:
			ps.at(shard, string(s.Metric["level"])).native = s.Histogram
			continue
		}
		if !ps.put(shard, s) {
			if _, seen := rejected[shard]; !seen {
				rejected[shard] = notANumber(shard, s)
			}
		}
	}
	for _, s := range quantiles {
		shard := shards[targetOf(s.Metric)]
		p := ps.at(shard, string(s.Metric["level"]))
		q, err := strconv.ParseFloat(string(s.Metric["quantile"]), 64)
		v := float64(s.Value)
		switch {
		case err != nil, p.count == 0 && math.IsNaN(v):
		case math.IsNaN(v) || math.IsInf(v, 0):
			if _, seen := rejected[shard]; !seen {
				rejected[shard] = notANumber(shard, s)
			}
		default:
			p.quantiles[q] = v
		}
	}
	return ps, rejected
}

// put adds s, one of shard's series other than a latency quantile, to its
// part; false when its value is not a finite number.
func (ps parts) put(shard int, s *model.Sample) bool {
	v := float64(s.Value)
	name := s.Metric[model.MetricNameLabel]
	field, gauge := gauges[name]
	if !gauge && name != collector.StepResponsesName && name != collector.StepErrorsName {
		return true // a family the sums do not read
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	p := ps.at(shard, string(s.Metric["level"]))
	switch {
	case gauge:
		*field(p) = v
	case name == collector.StepResponsesName:
		// An HTTP status, a gRPC status name, or "other" (codes.go).
		if code, err := result.ParseCode(string(s.Metric["code"])); err == nil {
			p.responses[code] = v
		}
	default:
		p.errors[string(s.Metric["reason"])] = v
	}
	return true
}

func notANumber(shard int, s *model.Sample) string {
	return fmt.Sprintf("shard %d exported %s = %s, not a finite number: its figures cannot be summed, so its share is left out", shard, s.Metric, s.Value)
}
