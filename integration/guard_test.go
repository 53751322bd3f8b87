package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/realpart"
)

// The whole loop of a Prometheus guard with real parts: a real Prometheus
// scrapes the demo target's own metrics and loadprobe; a ramp on /shed has
// a guard on the target's 503 rate; the guard stops the ramp once the
// target sheds, and keeps the next run from sending any load while the
// rate stays up; Prometheus counts the breaches and fires
// LoadprobeGuardAborting.

const guardQuery = `sum(rate(http_requests_total{route="/shed",code="503"}[15s]))`

// guardConfig ramps /shed past its 8 in flight. abort.error_ratio is set
// out of reach: the guard, not the level's end, must stop the load.
const guardConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: shed
    request: {url: "http://TARGET/shed"}
    load: {concurrency: [4, 8, 16, 32], step_duration: 4s}
    abort: {error_ratio: 1}
    guard:
      prometheus:
        url: http://PROMETHEUS
        interval: 1s
        queries:
          - {name: shed_503, query: 'QUERY', max: 5}
    schedule: {interval: 20s}
`

const guardPromConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yml, alerts.yml]
scrape_configs:
  - job_name: loadprobe
    static_configs: [{targets: [%q]}]
  - job_name: target
    static_configs: [{targets: [%q]}]
`

// guardWindows shortens the rules' windows: the runs of the last minute
// count as in a row, and alerts fire without a pending time.
var guardWindows = windows{Baseline: "2m", Steady: "1m", Rate: "10s", Runs: "1m", For: "0s"}

// guardRun is what the test reads of a result.
type guardRun struct {
	Name    string    `json:"name"`
	Result  string    `json:"result"`
	Started time.Time `json:"started"`
	Steps   []struct {
		Level float64 `json:"level"`
		Cut   bool    `json:"cut"`
	} `json:"steps"`
	Abort *struct {
		By        string  `json:"by"`
		Guard     string  `json:"guard"`
		Value     float64 `json:"value"`
		Level     float64 `json:"level"`
		AtSeconds float64 `json:"at_seconds"`
	} `json:"abort"`
}

func TestPrometheusGuardStopsARampOnTheTargetsOwnMetrics(t *testing.T) {
	promBin := realpart.Find(t, "prometheus", "apt-get install --no-install-recommends prometheus")
	began := time.Now()
	dir := t.TempDir()
	bin := buildLoadprobe(t, dir)

	target := startProc(t, "demo target", dir, bin, "target", "--listen=127.0.0.1:0")
	targetAddr := target.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	for _, f := range []string{"rules.yml", "alerts.yml"} {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), shortenWindows(string(raw), guardWindows))
	}
	daemonAddr, promAddr := freePort(t), freePort(t)
	writeFile(t, filepath.Join(dir, "prometheus.yml"), fmt.Sprintf(guardPromConfig, daemonAddr, targetAddr))
	prom := &prometheus{base: "http://" + promAddr}
	prom.proc = startProc(t, "prometheus", dir, promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--rules.alert.resend-delay=1s")
	waitHTTP(t, prom.base+"/-/ready")
	// The guard's first evaluation needs the target's series: a query
	// without a sample would abort the first run before any load.
	prom.waitData(t, guardQuery, startTimeout)
	t.Logf("Prometheus scrapes the demo target (%.1fs after start)", since(began))

	cfg := strings.NewReplacer("TARGET", targetAddr, "PROMETHEUS", promAddr, "QUERY", guardQuery).Replace(guardConfig)
	cfgFile := filepath.Join(dir, "loadprobe.yml")
	writeFile(t, cfgFile, cfg)
	daemon := startProc(t, "loadprobe daemon", dir, bin, "--config.file="+cfgFile, "--web.listen-address="+daemonAddr)
	daemon.waitLogAddr(t, `msg="Listening on" address=(\S+)`)

	// The ramp, stopped by the guard.
	first := waitGuardRun(t, daemonAddr, func(r guardRun) bool { return r.Result != "running" }, 45*time.Second)
	t.Logf("first run (%.1fs after start): %s, steps %+v, abort %+v", since(began), first.Result, first.Steps, first.Abort)
	a := first.Abort
	if first.Result != "aborted" || a == nil || a.By != "prometheus" || a.Guard != "shed_503" || !(a.Value > 5) {
		t.Fatalf("first run %s, abort %+v: want aborted by the Prometheus guard shed_503 above 5", first.Result, a)
	}
	last := first.Steps[len(first.Steps)-1]
	if !last.Cut || last.Level != a.Level || a.Level < 16 {
		t.Errorf("steps %+v, abort at level %g: want the ramp cut at a level that sheds (16 or more), no higher one run", first.Steps, a.Level)
	}
	// Load stopped within one interval (1s) and a second of Prometheus
	// seeing the rate above max, plus one scrape for the rate to move.
	stopped := first.Started.Add(time.Duration(a.AtSeconds * float64(time.Second)))
	if seen, ok := firstAbove(t, prom, guardQuery, first.Started, stopped.Add(time.Second), 5); ok {
		lag := stopped.Sub(seen)
		t.Logf("load stopped %.1fs after Prometheus first read the 503 rate above 5", lag.Seconds())
		if lag > 3*time.Second {
			t.Errorf("load stopped %s after the rate crossed max, want within the interval and a second (and a scrape)", lag)
		}
	} else {
		t.Errorf("Prometheus never read the 503 rate above 5 before the stop at %s", stopped)
	}

	// The next run finds the rate still up: no load at all.
	second := waitGuardRun(t, daemonAddr, func(r guardRun) bool { return r.Started.After(first.Started) && r.Result != "running" }, 40*time.Second)
	t.Logf("second run (%.1fs after start): %s, %d steps, abort %+v", since(began), second.Result, len(second.Steps), second.Abort)
	if second.Result != "aborted" || second.Abort == nil || len(second.Steps) != 0 {
		t.Errorf("second run %s with %d steps: want aborted before any load while the target sheds", second.Result, len(second.Steps))
	}

	// Prometheus counts the breaches and fires the alert.
	prom.waitData(t, `loadprobe_guard_breaches_total{probe="shed",guard="shed_503"} >= 2`, 10*time.Second)
	prom.waitData(t, `ALERTS{alertname="LoadprobeGuardAborting",probe="shed",alertstate="firing"}`, 20*time.Second)
	t.Logf("LoadprobeGuardAborting firing %.1fs after start", since(began))
}

// waitGuardRun polls the daemon's results until the probe's run satisfies done.
func waitGuardRun(t *testing.T, addr string, done func(guardRun) bool, bound time.Duration) guardRun {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/api/v1/results")
		if err == nil {
			var got struct{ Probes []guardRun }
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("/api/v1/results: %v", err)
			}
			for _, r := range got.Probes {
				if r.Name == "shed" && done(r) {
					return r
				}
			}
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("no run of shed as awaited within %s", bound)
	return guardRun{}
}

// firstAbove is the first time in [start, end], at 100ms steps, at which
// q's first series reads above threshold.
func firstAbove(t *testing.T, p *prometheus, q string, start, end time.Time, threshold float64) (time.Time, bool) {
	t.Helper()
	data, _, err := p.api("/api/v1/query_range", url.Values{"query": {q},
		"start": {promTime(start)}, "end": {promTime(end)}, "step": {"0.1"}})
	if err != nil {
		t.Fatalf("query_range %s: %v", q, err)
	}
	var d struct{ Result []series }
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Result) == 0 {
		return time.Time{}, false
	}
	for _, v := range d.Result[0].Values {
		ts, _ := v[0].(float64)
		s, _ := v[1].(string)
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > threshold {
			return time.UnixMilli(int64(ts * 1000)), true
		}
	}
	return time.Time{}, false
}
