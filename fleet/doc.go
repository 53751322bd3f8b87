// Package fleet is what replicas of loadprobe that run the same probes
// as one fleet share, with no coordinator of their own (docs/fleet.md):
// each replica's shard of every level, and the wall-clock arithmetic by
// which their runs and steps start together. The replica with ordinal 0
// reads the fleet's figures back through Prometheus with package readback.
package fleet
