package fleet

import (
	"fmt"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/collector"
)

// target names one scraped replica: Prometheus gives every series of a
// scrape its job and instance.
type target struct{ job, instance string }

func targetOf(m model.Metric) target {
	return target{job: string(m[model.JobLabel]), instance: string(m[model.InstanceLabel])}
}

// shardsOf maps every replica that says it is a shard of this fleet
// (loadprobe_shard_info) to its shard. Two replicas that say they are one
// shard double its share: a problem, and neither counts.
func shardsOf(info model.Vector, shards int) (map[target]int, []string) {
	byTarget := map[target]int{}
	claimed := map[int]target{}
	var problems []string
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
	}
	return byTarget, problems
}

// part is one shard's step at one level, as its series say.
type part struct {
	throughput, goodput, inFlight, held, share float64
	cpu                                        float64 // generator_cpu_ratio of the shard's process
	started                                    float64 // Unix seconds; 0 when not exported
	count, sum                                 float64 // the latency summary's
	quantiles                                  map[float64]float64
	responses                                  map[int]float64
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
		p = &part{quantiles: map[float64]float64{}, responses: map[int]float64{}, errors: map[string]float64{}}
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
// series of other replicas are no part of this fleet.
func partsOf(steps model.Vector, shards map[target]int) parts {
	ps := parts{}
	for _, s := range steps {
		shard, ok := shards[targetOf(s.Metric)]
		if !ok {
			continue
		}
		p := ps.at(shard, string(s.Metric["level"]))
		v := float64(s.Value)
		name := s.Metric[model.MetricNameLabel]
		if field, ok := gauges[name]; ok {
			*field(p) = v
			continue
		}
		switch name {
		case collector.StepLatencyName:
			if q, err := strconv.ParseFloat(string(s.Metric["quantile"]), 64); err == nil {
				p.quantiles[q] = v
			}
		case collector.StepResponsesName:
			if code, err := strconv.Atoi(string(s.Metric["code"])); err == nil {
				p.responses[code] = v
			}
		case collector.StepErrorsName:
			p.errors[string(s.Metric["reason"])] = v
		}
	}
	return ps
}
