package integration

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	lpresult "github.com/loadprobe/loadprobe/result"
)

// fleetSearchConfig searches the fleet bench's pool of 12 workers of 50ms:
// at most 12 steps of 2s, each followed by a settle allowance of 1s, so an
// aligned run takes 36s of its 60s interval.
const fleetSearchConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: work
    request: {url: "http://TARGET/work", timeout: 1s}
    load:
      search: {concurrency: {from: 1, max: 64}, precision: 0.1, max_steps: 12}
      step_duration: 2s
    schedule: {interval: 60s}
`

// Three real daemons search the pool together through a real Prometheus
// with native histograms on, each reading every step's fleet sum from it
// and choosing the next level alone: they choose alike, and find the knee
// bracket a lone loadprobe finds on the same target, in at most two more
// steps.
func TestFleetSearchFindsTheLoneKnee(t *testing.T) {
	began := time.Now()
	b := newFleetBench(t, fleetSearchConfig)
	alone := runAlone(t, b.dir, b.bin, b.cfgFile)
	lone := alone.BreakingPoints.Knee
	t.Logf("alone: levels %v, knee %+v (%.1fs after start)", stepLevels(alone), lone, since(began))
	if lone == nil || math.Abs(lone.Bracket[1]-fleetWorkers) > 1 {
		t.Fatalf("one loadprobe alone: knee %+v, want its bracket at the pool's %d connections", lone, fleetWorkers)
	}

	promAddr := freePort(t)
	addrs := make([]string, fleetReplicas)
	for i := range addrs {
		addrs[i] = freePort(t)
		startProc(t, fmt.Sprintf("replica %d", i), b.dir, b.bin, "--config.file="+b.cfgFile, "--web.listen-address="+addrs[i],
			fmt.Sprintf("--shard=%d/%d", i, fleetReplicas), "--fleet.prometheus-url=http://"+promAddr)
	}
	// The fleet reads each step within its settle allowance (1s): its
	// Prometheus scrapes the replicas four times as often, with native
	// histograms on.
	scraped := scrapeFleet(t, b.dir, b.promBin, promAddr, modes[1], 250*time.Millisecond, addrs)
	t.Logf("3 replicas and Prometheus ready, every replica scraped (%.1fs after start)", since(began))

	runs := make([]lpresult.Result, fleetReplicas)
	deadline := time.Now().Add(2 * fleetTimeout) // the next boundary of 60s, the run of 36s
	for i, a := range addrs {
		for runs[i] = lastRun(t, a, scraped); runs[i].Ended == "" || i == 0 && runs[i].Fleet == nil; runs[i] = lastRun(t, a, scraped) {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d ended no run within %s", i, 2*fleetTimeout)
			}
			time.Sleep(pollInterval)
		}
	}
	for i, r := range runs {
		t.Logf("replica %d: run %s, levels %v %s", i, r.Ended, stepLevels(r), r.Error)
		if r.Ended != lpresult.ResultCompleted {
			t.Errorf("replica %d: run %s (%s), want completed", i, r.Ended, r.Error)
		}
		if !slices.Equal(stepLevels(r), stepLevels(runs[0])) {
			t.Errorf("replica %d ran levels %v, replica 0 %v: the fleet must choose alike", i, stepLevels(r), stepLevels(runs[0]))
		}
	}
	f := runs[0].Fleet
	t.Logf("the fleet: %s", fleetText(f))
	if !f.Valid || f.Replicas != fleetReplicas || f.LatencySource != lpresult.LatencyNative {
		t.Fatalf("the fleet's run: %s; want valid, with every shard, its latency from native histograms", fleetText(f))
	}
	k := f.BreakingPoints.Knee
	if k == nil || math.Abs(k.Bracket[0]-lone.Bracket[0]) > 1 || math.Abs(k.Bracket[1]-lone.Bracket[1]) > 1 {
		t.Errorf("the fleet's knee %+v, want its bracket within a level (a connection) of the lone one's %v", k, lone.Bracket)
	}
	if len(f.Steps) > len(alone.Steps)+2 {
		t.Errorf("the fleet searched %d steps, the lone loadprobe %d: want at most 2 more", len(f.Steps), len(alone.Steps))
	}
}

func stepLevels(r lpresult.Result) []float64 {
	var ls []float64
	for _, s := range r.Steps {
		ls = append(ls, s.Level)
	}
	return ls
}
