package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/fleet"
)

// ConfigHashLabel is loadprobe_shard_info's label naming the config the
// replica runs (config.Config.Hash): the fleet reader sums only shards
// that run one config.
const ConfigHashLabel = "config_hash"

// RegisterShard exports loadprobe_shard_info{shard, shards, config_hash} 1:
// which part of a fleet this replica sends (docs/fleet.md, "Shards"), and
// the config it runs now, read from hash at every scrape (a reload
// changes it). A lone loadprobe is shard 0 of 1, so a fleet query and its
// alerts read one replica and many alike: count(loadprobe_shard_info)
// against the shards label tells a missing replica.
func RegisterShard(reg prometheus.Registerer, sh fleet.Shard, hash func() string) {
	reg.MustRegister(&shardCollector{hash: hash, desc: prometheus.NewDesc(namespace+"_shard_info",
		"This replica's shard: it sends its 1/shards part of every level of every probe (--shard); config_hash identifies its config file. Always 1.",
		[]string{ConfigHashLabel}, prometheus.Labels{"shard": strconv.Itoa(sh.Index), "shards": strconv.Itoa(sh.Replicas())})})
}

type shardCollector struct {
	desc *prometheus.Desc
	hash func() string
}

func (c *shardCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *shardCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, c.hash())
}
