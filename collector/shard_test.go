package collector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/fleet"
)

func TestShardInfo(t *testing.T) {
	tests := []struct {
		shard fleet.Shard
		hash  string
		want  string
	}{
		{fleet.Shard{Index: 1, Count: 3}, "0123456789abcdef", `loadprobe_shard_info{config_hash="0123456789abcdef",shard="1",shards="3"} 1`},
		{fleet.Shard{}, "", `loadprobe_shard_info{config_hash="",shard="0",shards="1"} 1`},
	}
	for _, tt := range tests {
		reg := prometheus.NewPedanticRegistry()
		RegisterShard(reg, tt.shard, func() string { return tt.hash })
		want := "# HELP loadprobe_shard_info This replica's shard: it sends its 1/shards part of every level of every probe (--shard); config_hash identifies its config file. Always 1.\n" +
			"# TYPE loadprobe_shard_info gauge\n" + tt.want + "\n"
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadprobe_shard_info"); err != nil {
			t.Errorf("shard %v: %v", tt.shard, err)
		}
		if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
			t.Errorf("shard %v: lint %v %v", tt.shard, problems, err)
		}
	}
}
