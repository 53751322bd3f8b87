package statuspage

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// Replica 0's page shows its fleet's figures beside its own run: a whole
// fleet's breaking points and capacity, and for a fleet with a shard
// missing, no capacity but the shard named.
func TestStatusPageShowsTheFleet(t *testing.T) {
	now := time.Now()
	whole := finished("work", now.Add(-time.Minute))
	whole.Fleet = &result.Fleet{Shards: 3, Replicas: 3, Valid: true, PeakThroughput: 1200, StepStartSkewSeconds: 0.004, LatencySource: result.LatencyNative,
		BreakingPoints: result.BreakingPoints{Knee: &result.Point{Level: 12, Throughput: 1190}},
		Capacity:       &result.Point{Level: 24, Throughput: 1200}}
	broken := finished("shed", now.Add(-time.Minute))
	broken.Fleet = &result.Fleet{Shards: 3, Replicas: 2, MissingShards: []int{2},
		Problems: []string{"shard 2 of 3 has no step in this run at connections 24, 48"}}
	states := []state.Probe{{Probe: probe("work", 1, 2, 4, 8, 16), Last: whole}, {Probe: probe("shed", 1, 2, 4, 8, 16), Last: broken}}
	_, page := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	block := func(name string) string {
		i := strings.Index(page, `id="fleet-`+name+`"`)
		if i < 0 {
			t.Fatalf("no fleet block for %s in the page", name)
		}
		return page[i:min(len(page), i+2500)]
	}
	strip := regexp.MustCompile(`<[^>]+>|\s+`)
	text := func(s string) string { return strip.ReplaceAllString(s, " ") }
	for _, want := range []string{"Fleet of 3", "knee 12 connections", "capacity 24 connections", "replicas 3 of 3", "valid yes", "skew 4ms", "latency p99 ±1% (native histograms)"} {
		if got := text(block("work")); !strings.Contains(strings.Join(strings.Fields(got), " "), want) {
			t.Errorf("whole fleet: %q not in %q", want, strings.Join(strings.Fields(got), " "))
		}
	}
	got := strings.Join(strings.Fields(text(block("shed"))), " ")
	for _, want := range []string{"replicas 2 of 3", "valid no", "shard 2 of 3 has no step in this run at connections 24, 48"} {
		if !strings.Contains(got, want) {
			t.Errorf("fleet with a shard missing: %q not in %q", want, got)
		}
	}
}
