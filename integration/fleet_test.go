package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/loadprobe/loadprobe/internal/realpart"
	"github.com/loadprobe/loadprobe/internal/testkit"
	lpresult "github.com/loadprobe/loadprobe/result"
)

// The fleet test in one paragraph: against one demo target whose /work pool
// has 12 workers, one loadprobe finds the knee at 12 connections with levels
// 3…48 alone (`loadprobe run`). Then three daemons, --shard=0/3, 1/3 and 2/3,
// run the same ramp together (1, 2, 4, 8, 16 connections each), with a real
// Prometheus scraping them every second; replica 0 reads each run back
// through it. The fleet's knee is the lone loadprobe's, its peak within 5%,
// and the replicas' steps start within 100 ms of one another. Then replica 2
// is killed in the middle of the next run: that fleet run is invalid and
// names shard 2.

const (
	fleetWorkers = 12
	// fleetWorkTime is how long /work holds a worker. At 12 connections each
	// connection also waits for its round trip, which the saturated levels
	// above hide: on a busy 2-core machine that is about 1ms, and with 10ms of
	// work it kept level 12 under 95% of the peak (the knee rule), putting the
	// knee at 24. With 50ms it costs 2%.
	fleetWorkTime = "50ms"
	fleetReplicas = 3
	// fleetInterval spaces the fleet's aligned runs: a run of five 2s steps,
	// each with its 1s settle allowance, takes 15s.
	fleetInterval = 30 * time.Second
	fleetWait     = 8 * time.Second // --fleet.wait: the last step's scrape comes within it
	// fleetTimeout bounds the wait for one fleet run to be judged: the next
	// boundary (30s), the run (15s) and the read-back.
	fleetTimeout = 90 * time.Second
	// stepSkew is the most the replicas' step starts may differ: clocks on one
	// machine agree, so this is the timers' and the scheduler's lateness.
	stepSkew = 100 * time.Millisecond
)

const fleetConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: work
    request: {url: "http://TARGET/work", timeout: 1s}
    load: {concurrency: [3, 6, 12, 24, 48], step_duration: 2s}
    schedule: {interval: 30s}
`

const fleetPromConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yml, alerts.yml]
scrape_configs:
  - job_name: loadprobe
    static_configs:
      - targets: [%s]
`

// fleetBench is what the fleet tests share: Prometheus's binary, a
// directory, loadprobe built there, and its config file there, whose TARGET
// is the address of a demo target of fleetWorkers workers of
// fleetWorkTime.
type fleetBench struct{ promBin, dir, bin, cfgFile string }

func newFleetBench(t *testing.T, config string) fleetBench {
	t.Helper()
	b := fleetBench{promBin: realpart.Find(t, "prometheus", "apt-get install --no-install-recommends prometheus"), dir: t.TempDir()}
	b.bin = buildLoadprobe(t, b.dir)
	target := startProc(t, "target (12 workers of 50ms)", b.dir, b.bin, "target", "--listen=127.0.0.1:0",
		fmt.Sprint("--workers=", fleetWorkers), "--work-time="+fleetWorkTime)
	targetAddr := target.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	b.cfgFile = filepath.Join(b.dir, "loadprobe.yml")
	writeFile(t, b.cfgFile, strings.ReplaceAll(config, "TARGET", targetAddr))
	return b
}

func TestFleetAgainstPrometheus(t *testing.T) {
	began := time.Now()
	b := newFleetBench(t, fleetConfig)
	promBin, dir, bin, cfgFile := b.promBin, b.dir, b.bin, b.cfgFile

	// One loadprobe alone, first: the figures the fleet must find again.
	alone := runAlone(t, dir, bin, cfgFile)
	t.Logf("alone: knee %+v, peak %.0f/s (%.1fs after start)", alone.BreakingPoints.Knee, alone.PeakThroughput, since(began))
	if k := alone.BreakingPoints.Knee; k == nil || k.Level != fleetWorkers {
		t.Fatalf("one loadprobe alone: knee %+v, want at %d connections (the pool)", k, fleetWorkers)
	}

	// The fleet and the Prometheus that sums it.
	for _, f := range []string{"rules.yml", "alerts.yml"} {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), shortenWindows(string(raw), shortWindows))
	}
	promAddr := freePort(t)
	addrs := make([]string, fleetReplicas)
	for i := range addrs {
		addrs[i] = freePort(t)
	}
	replicas := make([]*proc, fleetReplicas)
	for i := range replicas {
		args := []string{"--config.file=" + cfgFile, "--web.listen-address=" + addrs[i], fmt.Sprintf("--shard=%d/%d", i, fleetReplicas)}
		if i == 0 {
			args = append(args, "--fleet.prometheus-url=http://"+promAddr, "--fleet.wait="+fleetWait.String())
		}
		replicas[i] = startProc(t, fmt.Sprintf("replica %d", i), dir, bin, args...)
	}
	promCfg := filepath.Join(dir, "prometheus-fleet.yml")
	writeFile(t, promCfg, fmt.Sprintf(fleetPromConfig, `"`+strings.Join(addrs, `", "`)+`"`))
	// With native histograms on: replica 0 reads the fleet's latency from
	// them.
	prom := &prometheus{mode: modes[1], base: "http://" + promAddr}
	prom.proc = startProc(t, "prometheus", dir, promBin, append([]string{"--config.file=" + promCfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data-fleet"), "--web.listen-address=" + promAddr}, modes[1].flags...)...)
	for _, a := range append([]string{promAddr}, addrs...) {
		waitHTTP(t, "http://"+a+"/-/ready")
	}
	t.Logf("3 replicas and Prometheus ready (%.1fs after start)", since(began))

	first := waitFleetRun(t, addrs[0], time.Time{})
	t.Logf("first fleet run started %s, judged %.1fs after the test's start: %s", first.Started.Format(time.RFC3339Nano), since(began), fleetText(first.Fleet))
	t.Run("as-one-loadprobe", func(t *testing.T) {
		f := first.Fleet
		if !f.Valid || f.Replicas != fleetReplicas || len(f.MissingShards) != 0 {
			t.Fatalf("fleet run: %s; want valid with every shard", fleetText(f))
		}
		if k := f.BreakingPoints.Knee; k == nil || k.Level != fleetWorkers {
			t.Errorf("fleet knee %+v, want at %d connections, as one loadprobe alone", k, fleetWorkers)
		}
		if d := math.Abs(f.PeakThroughput-alone.PeakThroughput) / alone.PeakThroughput; d > 0.05 {
			t.Errorf("fleet peak %.0f/s is %.1f%% off the lone loadprobe's %.0f/s, want within 5%%", f.PeakThroughput, 100*d, alone.PeakThroughput)
		}
	})
	t.Run("steps-together", func(t *testing.T) {
		starts := make([][]time.Time, fleetReplicas)
		for i, a := range addrs {
			// Each replica stamps its run when its own timer fired:
			// within the skew of replica 0's stamp, before it or after.
			r := lastRun(t, a, first.Started.Add(-time.Second))
			for _, s := range r.Steps {
				starts[i] = append(starts[i], s.Started)
			}
		}
		for level := range starts[0] {
			var ts []time.Time
			for i := range starts {
				if level >= len(starts[i]) {
					t.Fatalf("replica %d has %d steps, replica 0 %d", i, len(starts[i]), len(starts[0]))
				}
				ts = append(ts, starts[i][level])
			}
			spread := slices.MaxFunc(ts, time.Time.Compare).Sub(slices.MinFunc(ts, time.Time.Compare))
			t.Logf("step %d: starts spread over %s", level+1, spread)
			if spread > stepSkew {
				t.Errorf("step %d started %s apart across the replicas (%v), want at most %s", level+1, spread, ts, stepSkew)
			}
		}
	})
	t.Run("native-latency", func(t *testing.T) {
		checkFleetNativeLatency(t, first, addrs)
	})
	t.Run("fleet-expressions", func(t *testing.T) {
		checkFleetExpressions(t, prom, time.Now())
	})

	// The next run, with replica 2 killed in the middle of it.
	next := first.Started.Add(fleetInterval)
	time.Sleep(time.Until(next.Add(5 * time.Second))) // into its second level
	if err := replicas[2].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("replica 2 killed %.1fs into the run started at %s", time.Since(next).Seconds(), next.Format(time.RFC3339))
	broken := waitFleetRun(t, addrs[0], first.Started)
	t.Run("replica-killed", func(t *testing.T) {
		f := broken.Fleet
		t.Logf("fleet run with replica 2 killed: %s", fleetText(f))
		if f.Valid || !slices.Equal(f.MissingShards, []int{2}) || len(f.Problems) == 0 || !strings.Contains(f.Problems[0], "shard 2 of 3") {
			t.Errorf("fleet run with replica 2 killed: %s; want invalid, naming shard 2", fleetText(f))
		}
		if f.Capacity != nil || f.PeakThroughput != 0 {
			t.Errorf("fleet run with replica 2 killed exports capacity %+v and peak %g: a missing shard must never read as a lower capacity", f.Capacity, f.PeakThroughput)
		}
	})
	t.Logf("the fleet test took %.1fs", since(began))
}

// checkFleetNativeLatency checks that the fleet's run r read its latency
// from the replicas' native histograms, and that at every level its p99
// lies in the bucket where the p99's rank falls in the replicas' native
// histograms, summed: the bucket (0.54% wide) that holds the p99 of all
// their samples as their step histograms read it (prober's
// TestStatsNativeBucketsHoldTheFleetsQuantiles), so within 1% of it. The
// replicas still export r's steps: the next run starts 30 s after r.
func checkFleetNativeLatency(t *testing.T, r lpresult.Result, addrs []string) {
	f := r.Fleet
	if f.LatencySource != lpresult.LatencyNative {
		t.Fatalf("fleet latency from %q, want native_histograms", f.LatencySource)
	}
	sum := map[string]map[float64]float64{} // level → bucket upper bound → count
	for _, a := range addrs {
		for level, buckets := range nativeStepBuckets(t, a, r.Started) {
			if sum[level] == nil {
				sum[level] = map[float64]float64{}
			}
			for upper, n := range buckets {
				sum[level][upper] += n
			}
		}
	}
	for _, s := range f.Steps {
		level := strconv.FormatFloat(s.Level, 'f', -1, 64)
		buckets := sum[level]
		var total float64
		for _, n := range buckets {
			total += n
		}
		uppers := slices.Sorted(maps.Keys(buckets))
		rank, below := 0.99*total, 0.0
		for _, upper := range uppers {
			if below += buckets[upper]; below >= rank {
				lower := upper / math.Exp2(1.0/128)
				t.Logf("level %s: fleet p99 %.4fms, in the summed histograms' bucket (%.4f, %.4f] ms", level, 1e3*s.Latency.P99, 1e3*lower, 1e3*upper)
				if s.Latency.P99 < lower*0.9999 || s.Latency.P99 > upper*1.0001 {
					t.Errorf("level %s: fleet p99 %v outside the bucket (%v, %v] that holds the p99 of every replica's samples", level, s.Latency.P99, lower, upper)
				}
				break
			}
		}
		if total == 0 {
			t.Errorf("level %s: no replica exported a native histogram of the run", level)
		}
	}
}

// nativeStepBuckets scrapes a replica's native step histograms of "work",
// as Prometheus does (in protobuf), by level: each bucket's count by its
// upper bound. It fails the test unless the replica still exports the
// run that started at started.
func nativeStepBuckets(t *testing.T, addr string, started time.Time) map[string]map[float64]float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	byLevel := map[string]map[float64]float64{}
	first := math.Inf(1)
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["probe"] != "work" {
				continue
			}
			switch mf.GetName() {
			case "loadprobe_step_started_timestamp_seconds":
				first = min(first, m.GetGauge().GetValue())
			case "loadprobe_step_latency_histogram_seconds":
				h := m.GetHistogram()
				buckets := map[float64]float64{}
				for i, n := range testkit.NativeBuckets(h) {
					buckets[math.Exp2(float64(i)/math.Exp2(float64(h.GetSchema())))] = float64(n)
				}
				byLevel[labels["level"]] = buckets
			}
		}
	}
	if d := math.Abs(first - float64(started.UnixNano())/1e9); d > 1 {
		t.Fatalf("replica %s exports steps that began at %v, not the run of %s", addr, first, started)
	}
	return byLevel
}

// runAlone runs the ramp once with one loadprobe and returns its result.
func runAlone(t *testing.T, dir, bin, cfgFile string) lpresult.Result {
	t.Helper()
	cmd := exec.Command(bin, "run", "--config.file="+cfgFile, "--output=json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState.ExitCode() != 1 { // 1: an expectation failed, still a result
		t.Fatalf("loadprobe run: %v\n%s", err, out)
	}
	var rs struct{ Probes []lpresult.Result }
	if err := json.Unmarshal(out, &rs); err != nil || len(rs.Probes) != 1 {
		t.Fatalf("loadprobe run's JSON: %v\n%s", err, out)
	}
	return rs.Probes[0]
}

// lastRun is a daemon's last finished run of "work" that started at or
// after from; a zero Result when it has none.
func lastRun(t *testing.T, addr string, from time.Time) lpresult.Result {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/results")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rs struct{ Probes []lpresult.Result }
	if err := json.NewDecoder(resp.Body).Decode(&rs); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs.Probes {
		if r.Name == "work" && r.Ended != lpresult.ResultRunning && !r.Started.Before(from) {
			return r
		}
	}
	return lpresult.Result{}
}

// waitFleetRun waits for replica 0's first run of "work" started after
// after whose fleet figures are in.
func waitFleetRun(t *testing.T, addr string, after time.Time) lpresult.Result {
	t.Helper()
	deadline := time.Now().Add(fleetTimeout)
	for time.Now().Before(deadline) {
		if r := lastRun(t, addr, after.Add(time.Second)); r.Fleet != nil {
			return r
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("replica 0 judged no fleet run started after %s within %s", after, fleetTimeout)
	return lpresult.Result{}
}

func fleetText(f *lpresult.Fleet) string {
	b, _ := json.Marshal(struct {
		Valid          bool
		Replicas       int
		Missing        []int
		Problems       []string
		Peak           float64
		BreakingPoints lpresult.BreakingPoints
		Capacity       *lpresult.Point
		Skew           float64
	}{f.Valid, f.Replicas, f.MissingShards, f.Problems, f.PeakThroughput, f.BreakingPoints, f.Capacity, f.StepStartSkewSeconds})
	return string(b)
}

// checkFleetExpressions evaluates every dashboard and rule expression over
// the fleet's series in the fleet's Prometheus, each with the data a whole
// fleet gives it (alerts, which fire only on a broken fleet, may be empty).
func checkFleetExpressions(t *testing.T, p *prometheus, evalAt time.Time) {
	exprs, err := expressions()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range exprs {
		if !strings.Contains(e.Expr, "fleet_") && !strings.Contains(e.Expr, "shard") && !strings.Contains(e.Source, "Fleet") {
			continue
		}
		q := e.Expr
		if e.Kind == "panel" || e.Kind == "variable" {
			q = substituteTemplateVars(q, vars(".*", "work"))
		}
		// The alerts' recording rules are evaluated every second: wait for the first.
		rec := evalExpr(p, e, "work", q, evalAt)
		for range 20 {
			if hasData(rec) || e.Kind == "alert" || rec.Error != "" {
				break
			}
			time.Sleep(pollInterval)
			rec = evalExpr(p, e, "work", q, time.Now())
		}
		checked++
		switch {
		case rec.Error != "":
			t.Errorf("%s %s: %s\n%s", e.File, e.Source, rec.Error, q)
		case e.Kind != "alert" && !hasData(rec) && fleetMayBeEmpty[e.Source] == "":
			t.Errorf("%s %s: no data from a whole fleet\n%s", e.File, e.Source, q)
		case e.Kind == "alert" && hasData(rec):
			t.Errorf("%s %s: fires on a whole fleet: %v", e.File, e.Source, rec.Result.Labels)
		}
	}
	if checked < 8 {
		t.Errorf("%d fleet expressions checked, want every panel and rule over the fleet's series", checked)
	}
	t.Logf("%d fleet expressions evaluated", checked)
}

// fleetMayBeEmpty are the fleet expressions a whole fleet's ramp of /work
// leaves empty.
var fleetMayBeEmpty = map[string]string{
	"panel Fleet results / D": "no attempt fails: no first_failure breaking point",
}
