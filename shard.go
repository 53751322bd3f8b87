package main

import (
	"fmt"
	"os"

	"github.com/loadprobe/loadprobe/fleet"
)

// shardEnv is the environment variable --shard falls back to.
const shardEnv = "LOADPROBE_SHARD"

// addShardFlag adds --shard, which makes this loadprobe one replica of a
// fleet that runs the same probes together and is summed by Prometheus
// (docs/fleet.md, "Shards").
func addShardFlag(app flagGroup) *fleet.Shard {
	f := &shardFlag{}
	app.Flag("shard", "This replica's part of a fleet: i/N is replica i of N (from 0), which sends level/N of every level "+
		"(connections: the remainder to the lowest i). "+fleet.ShardOrdinal+"/N reads i from the host name's last -NUMBER, "+
		"the pod ordinal of a StatefulSet. Steps keep exporting the fleet's level.").
		Default("0/1").Envar(shardEnv).PlaceHolder("i/N").SetValue(f)
	return &f.Shard
}

// shardFlag is --shard's kingpin value.
type shardFlag struct{ fleet.Shard }

func (f *shardFlag) Set(s string) error {
	hostname, _ := os.Hostname() // only ordinal/N reads it, and says when it has no ordinal
	sh, err := fleet.ParseShard(s, hostname)
	if err != nil {
		// kingpin does not name the flag whose value it rejects.
		return fmt.Errorf("--shard (or $%s): %w", shardEnv, err)
	}
	f.Shard = sh
	return nil
}

func (f *shardFlag) String() string { return f.Shard.String() }
