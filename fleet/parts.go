package fleet

import (
	"fmt"
	"strconv"

	"github.com/prometheus/common/model"
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
		switch s.Metric[model.MetricNameLabel] {
		case "loadprobe_step_throughput":
			p.throughput = v
		case "loadprobe_step_goodput":
			p.goodput = v
		case "loadprobe_step_in_flight":
			p.inFlight = v
		case "loadprobe_step_load_held_ratio":
			p.held = v
		case "loadprobe_step_share":
			p.share = v
		case "loadprobe_step_generator_cpu_ratio":
			p.cpu = v
		case "loadprobe_step_started_timestamp_seconds":
			p.started = v
		case "loadprobe_step_latency_seconds_count":
			p.count = v
		case "loadprobe_step_latency_seconds_sum":
			p.sum = v
		case "loadprobe_step_latency_seconds":
			if q, err := strconv.ParseFloat(string(s.Metric["quantile"]), 64); err == nil {
				p.quantiles[q] = v
			}
		case "loadprobe_step_responses":
			if code, err := strconv.Atoi(string(s.Metric["code"])); err == nil {
				p.responses[code] = v
			}
		case "loadprobe_step_errors":
			p.errors[string(s.Metric["reason"])] = v
		}
	}
	return ps
}
