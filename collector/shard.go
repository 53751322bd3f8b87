package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/config"
)

// RegisterShard exports loadprobe_shard_info{shard, shards} 1: which part of
// a fleet this replica sends (docs/fleet.md, "Shards"). A lone
// loadprobe is shard 0 of 1, so a fleet query and its alerts read one
// replica and many alike: count(loadprobe_shard_info) against the shards label
// tells a missing replica.
func RegisterShard(reg prometheus.Registerer, sh config.Shard) {
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "shard_info",
		Help:      "This replica's shard: it sends its 1/shards part of every level of every probe (--shard). Always 1.",
		ConstLabels: prometheus.Labels{
			"shard":  strconv.Itoa(sh.Index),
			"shards": strconv.Itoa(sh.Replicas()),
		},
	})
	info.Set(1)
	reg.MustRegister(info)
}
