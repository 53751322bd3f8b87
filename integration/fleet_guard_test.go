package integration

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/internal/realpart"
	lpresult "github.com/loadprobe/loadprobe/result"
)

// guardWindow is the live guards' window in the fleet guard test: the
// fleet's guard asks the fleet's Prometheus as often.
const guardWindow = 500 * time.Millisecond

// fleetGuardConfig is a ramp of /work (10ms of work) with a live latency
// guard whose limit is LIMIT: 1ms on the replica whose guard fires in its
// first window, 10s on the others.
const fleetGuardConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: work
    request: {url: "http://TARGET/work", timeout: 1s}
    load: {concurrency: [3, 6], step_duration: 10s}
    schedule: {interval: 30s}
    guard: {window: 500ms, latency: {quantile: 0.5, max: LIMIT}}
`

// scrapeFleet starts a Prometheus at promAddr, in mode m, that scrapes the
// replicas at addrs every interval, and returns once it and every replica
// are ready and every replica has been scraped. Prometheus scrapes nothing
// for up to 5s after it starts (its first reload of targets), and a
// fleet's run that begins before then cannot hear of its peers: the test
// judges a run that begins after the time returned.
func scrapeFleet(t *testing.T, dir, promBin, promAddr string, m mode, interval time.Duration, addrs []string) time.Time {
	t.Helper()
	cfg := filepath.Join(dir, "prometheus-"+m.name+".yml")
	writeFile(t, cfg, fmt.Sprintf(`global: {scrape_interval: %s, scrape_timeout: %[1]s}
scrape_configs:
  - job_name: loadprobe
    static_configs: [{targets: ["%s"]}]
`, model.Duration(interval), strings.Join(addrs, `", "`)))
	prom := &prometheus{mode: m, base: "http://" + promAddr}
	prom.proc = startProc(t, "prometheus", dir, promBin, append([]string{"--config.file=" + cfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data-"+m.name), "--web.listen-address=" + promAddr}, m.flags...)...)
	for _, a := range append([]string{promAddr}, addrs...) {
		waitHTTP(t, "http://"+a+"/-/ready")
	}
	prom.waitData(t, fmt.Sprintf("count(up == 1) == %d", len(addrs)), fleetTimeout)
	return time.Now()
}

// A guard that fires on one replica of three stops the other two within
// one guard interval plus a second, through a real Prometheus that
// scrapes them every 500ms: replica 1's guard fires in the first window of
// the first step; replicas 0 and 2, whose guards never fire, stop by the
// fleet's guard, and every replica's run is aborted.
func TestFleetGuardStopsEveryReplica(t *testing.T) {
	promBin := realpart.Find(t, "prometheus", "apt-get install --no-install-recommends prometheus")
	began := time.Now()
	dir := t.TempDir()
	bin := buildLoadprobe(t, dir)
	target := startProc(t, "target", dir, bin, "target", "--listen=127.0.0.1:0")
	targetAddr := target.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	promAddr := freePort(t)
	addrs := make([]string, fleetReplicas)
	for i := range addrs {
		addrs[i] = freePort(t)
		limit := "10s"
		if i == 1 {
			limit = "1ms"
		}
		cfg := filepath.Join(dir, fmt.Sprintf("loadprobe-%d.yml", i))
		writeFile(t, cfg, strings.NewReplacer("TARGET", targetAddr, "LIMIT", limit).Replace(fleetGuardConfig))
		startProc(t, fmt.Sprintf("replica %d", i), dir, bin, "--config.file="+cfg, "--web.listen-address="+addrs[i],
			fmt.Sprintf("--shard=%d/%d", i, fleetReplicas), "--fleet.prometheus-url=http://"+promAddr)
	}
	scraped := scrapeFleet(t, dir, promBin, promAddr, modes[0], guardWindow, addrs)
	t.Logf("3 replicas and Prometheus ready, every replica scraped (%.1fs after start)", since(began))

	runs := make([]lpresult.Result, fleetReplicas)
	deadline := time.Now().Add(fleetTimeout)
	for i, a := range addrs {
		for runs[i] = lastRun(t, a, scraped); runs[i].Ended == ""; runs[i] = lastRun(t, a, scraped) {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d ended no run within %s", i, fleetTimeout)
			}
			time.Sleep(pollInterval)
		}
	}
	stopped := make([]time.Time, fleetReplicas)
	for i, r := range runs {
		if r.Ended != lpresult.ResultAborted || r.Abort == nil {
			t.Fatalf("replica %d: run %s (%s), want aborted", i, r.Ended, r.Error)
		}
		stopped[i] = r.Started.Add(time.Duration(r.Abort.AtSeconds * float64(time.Second)))
		t.Logf("replica %d: %s, stopped at %s", i, r.Error, stopped[i].Format("15:04:05.000"))
	}
	if a := runs[1].Abort; a.By != lpresult.ByLive || a.Guard != "latency" {
		t.Errorf("replica 1 stopped by %+v, want its own latency guard", *a)
	}
	for _, i := range []int{0, 2} {
		a := runs[i].Abort
		if a.By != lpresult.ByPrometheus || a.Guard != "fleet" {
			t.Errorf("replica %d stopped by %+v, want the fleet's guard", i, *a)
		}
		if after := stopped[i].Sub(stopped[1]); after > guardWindow+time.Second {
			t.Errorf("replica %d stopped %s after replica 1, want within %s (one guard interval plus a second)", i, after, guardWindow+time.Second)
		}
	}
}
