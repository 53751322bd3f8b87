package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/realpart"
)

// Headroom and the bottleneck against a hidden target of known shape: a
// pool of 12 workers of 20 ms (600/s, its knee at 12 connections) that
// exports its busy workers, beside a live traffic counter that grows by
// liveRate a second, both scraped by a real Prometheus every second.
// Five runs of `loadprobe run` (3s steps: two scrapes in the second half
// of each window, docs/telemetry.md) each read a headroom within 5% of their
// capacity over liveRate, name the workers the bottleneck within the
// knee's bracket, and read the levels below 8 under 80% busy.

const (
	liveRate     = 100 // the hidden target's live requests a second
	headroomRuns = 5
)

const headroomConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: pool
    request: {url: "http://TARGET/work", timeout: 1s}
    load: {concurrency: [2, 4, 8, 12, 16, 24], step_duration: 3s}
    telemetry:
      prometheus: {url: "http://PROM"}
      traffic: sum(rate(live_requests_total[10s]))
      peak_window: 1m
      saturation:
        - {name: workers, query: 'max(workers_busy{job="pool"} / workers{job="pool"})'}
`

// headroomPromConfig scrapes every 500ms: a step's saturation is the most
// busy of the samples in its window, and at the pool's size (12 of 12)
// a sample can catch connections between requests; with 1s scrapes a
// window held two samples, and once both read 9 of 12, leaving the knee
// without its bottleneck.
const headroomPromConfig = `global:
  scrape_interval: 500ms
  scrape_timeout: 500ms
scrape_configs:
  - job_name: pool
    static_configs: [{targets: [%q]}]
  - job_name: live
    metrics_path: /live
    static_configs: [{targets: [%q]}]
`

func TestHeadroomAndBottleneckOfAHiddenPool(t *testing.T) {
	promBin := realpart.Find(t, "prometheus", "apt-get install --no-install-recommends prometheus")
	dir := t.TempDir()
	bin := buildLoadprobe(t, dir)

	// The pool is a process of its own, out of the (race-built) test's.
	pool := startProc(t, "pool (12 workers)", dir, bin, "target", "--listen=127.0.0.1:0", "--workers=12", "--work-time=20ms")
	poolAddr := pool.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	began := time.Now()
	mux := http.NewServeMux()
	mux.HandleFunc("/live", func(w http.ResponseWriter, _ *http.Request) {
		// A counter read at the scrape: its rate is liveRate to the
		// scrape's timing.
		fmt.Fprintf(w, "# TYPE live_requests_total counter\nlive_requests_total %.3f\n", liveRate*time.Since(began).Seconds())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	liveAddr := strings.TrimPrefix(srv.URL, "http://")

	promAddr := freePort(t)
	writeFile(t, filepath.Join(dir, "prometheus.yml"), fmt.Sprintf(headroomPromConfig, poolAddr, liveAddr))
	prom := &prometheus{base: "http://" + promAddr}
	prom.proc = startProc(t, "prometheus", dir, promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	waitHTTP(t, prom.base+"/-/ready")
	prom.waitData(t, `sum(rate(live_requests_total[10s])) and on () workers{job="pool"}`, 30*time.Second)

	cfgFile := filepath.Join(dir, "loadprobe.yml")
	writeFile(t, cfgFile, strings.NewReplacer("TARGET", poolAddr, "PROM", promAddr).Replace(headroomConfig))
	for i := range headroomRuns {
		r := runAlone(t, dir, bin, cfgFile)
		knee, b, h := r.BreakingPoints.Knee, r.Bottleneck, r.Headroom
		var sat []string
		for _, s := range r.Steps {
			sat = append(sat, fmt.Sprintf("%g: %.2f", s.Level, s.Saturation["workers"]))
			if v, ok := s.Saturation["workers"]; s.Level < 8 && (!ok || v >= 0.8) {
				t.Errorf("run %d: level %g read workers %.2f (read: %v), want below 0.8", i+1, s.Level, v, ok)
			}
		}
		t.Logf("run %d: capacity %+v, knee %+v, bottleneck %+v, headroom %+v; workers busy by level {%s}",
			i+1, r.Capacity, knee, b, h, strings.Join(sat, ", "))
		if r.Capacity == nil || knee == nil {
			t.Fatalf("run %d: capacity %+v, knee %+v: want both (%s)\n%s", i+1, r.Capacity, knee, r.Ended, strings.Join(r.Diagnosis, "\n"))
		}
		if b == nil || b.Resource != "workers" || b.Level <= knee.Bracket[0] || b.Level > knee.Level {
			t.Errorf("run %d: bottleneck %+v, want workers within the knee's bracket %v", i+1, b, knee.Bracket)
		}
		if want := r.Capacity.Throughput / liveRate; h == nil || !within(h.Ratio, want, 0.05) {
			t.Errorf("run %d: headroom %+v, want %.2f (capacity %.0f/s over %d/s) within 5%%", i+1, h, want, r.Capacity.Throughput, liveRate)
		}
	}
}

// within reports whether got lies within a relative tol of want.
func within(got, want, tol float64) bool { return got >= want*(1-tol) && got <= want*(1+tol) }
