package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/realpart"
)

// The test in one paragraph: build loadprobe, start its demo target (4 /work
// workers) and its daemon with short ramps against it, and two Prometheus
// servers scraping the daemon every second, one storing the classic form of the
// latency histograms and one (--enable-feature=native-histograms) only the native
// form, both loading short-window copies of dashboards/rules.yml and alerts.yml.
// Once a ramp of the probe "work" has completed and been scraped, evaluate every
// expression of the dashboards and rule files in both servers; then restart the
// target with 1 worker on the same address and watch LoadprobeCapacityDrift go
// pending and firing in both.

const (
	workersBefore = 4
	workersAfter  = 1

	// Template variable values; $__rate_interval is 4 scrape intervals or more in
	// Grafana, 10s keeps every rate window over ~10 samples here.
	rateInterval = "10s"

	// Bounds of the polls.
	startTimeout = 30 * time.Second // a process answers, the first sample is queryable
	// A ramp of "work" completed and was scraped. Its headroom needs its
	// second run, which follows the other nine probes' runs: 88 s after
	// the wait began here, and a CI run missed a bound of 90 s.
	rampTimeout   = 150 * time.Second
	alertTimeout  = 75 * time.Second // after the restart: the drift alert fires
	buildTimeout  = 5 * time.Minute
	queryTimeout  = 10 * time.Second
	pollInterval  = 250 * time.Millisecond
	stopTimeout   = 10 * time.Second
	logTailBytes  = 16 << 10
	probeWork     = "work"
	driftAlert    = "LoadprobeCapacityDrift"
	scrapeJobName = "loadprobe"
)

// shortWindows makes the rules react within the test: a 2-minute baseline, 1
// minute to call a load steady (the canary waits its turn behind the ramps), 10s
// rate windows, and 5s of pending before firing.
//
// The baseline holds the capacity with 4 workers from the first run of "work" (the
// restart follows its second) until the first run after the restart ends, ~40s at
// least; the median stays there until the 1-worker capacity has been exported for
// longer than that. The drift alert skips invalid runs, and the control check can
// flag a run of "work" as generator-limited, so this leaves room for the second
// run after the restart to be the one that fires it. The baseline alerts
// wait for the runsBeforeRestart valid runs the 4-worker baseline holds,
// not the 5 of a 7-day window.
var shortWindows = windows{Baseline: "2m", Steady: "1m", Rate: "10s", For: "5s", MinRuns: fmt.Sprint(runsBeforeRestart)}

// daemonConfig is the loadprobe config under test; TARGET is the demo target's
// address. Every probe targets the same host, so the scheduler runs them one after
// the other: the continuous canary waits its turn behind the ramps, as it would in
// production beside an hourly ramp of the same service.
const daemonConfig = `allowed_targets: [127.0.0.1]
probes:
  # The probe the drift alert follows. 4 workers x 10ms: 400/s from 4 connections;
  # the latency budget (35ms) is passed at 16 connections (40ms), so all breaking
  # points but first_failure fire, and capacity is ~400/s at 8. With 1 worker the
  # budget is passed at 4 connections, and capacity is ~100/s at 2.
  - name: work
    request: {url: "http://TARGET/work", timeout: 1s}
    # 2s steps: a second of the target's scrapes, 250ms apart, in each
    # step's window; 4 connections keep 4 workers busy in most of them.
    load: {concurrency: [1, 2, 4, 8, 16], step_duration: 2s}
    rules: {latency_budget: 35ms}
    control: noop
    expect: {min_capacity: 300}
    schedule: {interval: 20s}
    # The first Prometheus scrapes the target too: its busy workers are the
    # bottleneck at the knee, and the other probes' requests its live traffic.
    telemetry:
      prometheus: {url: "http://PROM"}
      traffic: sum(rate(http_requests_total{job="target", route!="/work"}[10s]))
      peak_window: 10m
      saturation:
        - {name: workers, query: 'max(workers_busy{job="target"} / workers{job="target"})'}

  # The control of work; also runs on its own once at start.
  - name: noop
    request: {url: "http://TARGET/noop", timeout: 1s}
    load: {concurrency: [1, 2, 4, 8, 16], step_duration: 1s}
    schedule: {interval: 1h}

  # Open loop, and 429s: /limited answers 429 above 400 requests per wall-clock
  # second; a 2s step at 600/s holds at least one whole second. Its live guard
  # (above the timeout: it never fires) exports the guard series.
  - name: limited
    request: {url: "http://TARGET/limited", timeout: 1s}
    load: {rate: [100, 600], step_duration: 2s}
    guard: {latency: {quantile: 0.99, max: 5s}}
    schedule: {interval: 30s}

  # Failures: /shed answers 503 above 8 requests in flight.
  - name: shed
    request: {url: "http://TARGET/shed", timeout: 1s}
    load: {concurrency: [2, 4, 10], step_duration: 1s}
    schedule: {interval: 30s}

  # WebSocket: /ws-limited holds 8 sessions and closes the 9th with 1013.
  - name: ws
    request: {url: "ws://TARGET/ws-limited", timeout: 1s}
    load: {concurrency: [7, 8, 9], step_duration: 1s}
    schedule: {interval: 1h}

  # A flow: log in, then fetch an item with the captured token; the dashboards'
  # Flow steps row shows its two steps. Three levels, so that a first run
  # whose first level passed before Prometheus's first scrape is still a
  # ramp to the steady-load rule (two levels of which one was seen read as
  # one steady load).
  - name: shop
    flow:
      - name: login
        request: {method: POST, url: "http://TARGET/login", body: '{"user": "user{{index}}"}', timeout: 1s}
        capture: {token: {json: token}}
      - name: item
        request:
          url: "http://TARGET/items/{{random_int 1 5000}}"
          headers: {Authorization: "Bearer {{.token}}"}
          timeout: 1s
    load: {concurrency: [1, 2, 4], step_duration: 1s}
    schedule: {interval: 30s}

  # The scalability model: /scale follows the law (peak near 22 connections), so
  # its ramp's fit has σ, κ and N*, and the model panels and rules have data.
  - name: scale
    request: {url: "http://TARGET/scale", timeout: 1s}
    load: {concurrency: [1, 2, 4, 8, 16, 32, 64], step_duration: 1s}
    schedule: {interval: 1h}

  # gRPC: the target's Shed (UNAVAILABLE above 8 in flight) and Limited
  # (RESOURCE_EXHAUSTED above 400/s), by reflection, so that the probe
  # dashboard's failure panels read gRPC status names where they read 503
  # and 429. Every level runs (abort off), so that their runs complete.
  - name: grpc-shed
    request:
      url: grpc://GRPCTARGET
      timeout: 1s
      grpc: {method: loadprobe.demo.v1.Target/Shed}
    load: {concurrency: [4, 8, 16], step_duration: 1s}
    abort: {error_ratio: 1}
    schedule: {interval: 30s}
  - name: grpc-limited
    request:
      url: grpc://GRPCTARGET
      timeout: 1s
      grpc: {method: loadprobe.demo.v1.Target/Limited}
    load: {concurrency: [4], step_duration: 2s}
    abort: {error_ratio: 1}
    schedule: {interval: 1h}

  # A continuous canary.
  - name: canary
    request: {url: "http://TARGET/noop", timeout: 1s}
    load: {rate: [10], step_duration: 1s}
    schedule: {continuous: true}
`

var configuredProbes = []string{"work", "noop", "limited", "shed", "ws", "shop", "scale", "grpc-shed", "grpc-limited", "canary"}

// runsBeforeRestart is how many runs of "work" end before the restart.
const runsBeforeRestart = 2

// probeExpect are expressions that must hold data for one probe of the config
// above, most of them left optional by ExpectData ("may be empty after one
// concurrency ramp"): they show that those panels work when their data exists.
var probeExpect = []struct{ probe, file, source string }{
	{"work", "loadprobe-overview.json", "panel Probes at a glance / D"},
	{"work", "loadprobe-overview.json", "panel Latency-budget level / A"},
	{"work", "loadprobe-overview.json", "panel Latency-budget level / B"},
	{"work", "loadprobe-overview.json", "panel Capacity against its 7-day median and the expected minimum / C"},
	{"shed", "loadprobe-overview.json", "panel Probes at a glance / E"},
	{"shed", "loadprobe-overview.json", "panel First-failure level / A"},
	{"shed", "loadprobe-probe.json", "panel Shedding, limiting, timeouts and refusals / A"},
	{"shed", "loadprobe-probe.json", "panel Failed attempts per second by outcome / A"},
	{"limited", "loadprobe-probe.json", "panel Shedding, limiting, timeouts and refusals / B"},
	{"grpc-shed", "loadprobe-probe.json", "panel Shedding, limiting, timeouts and refusals / A"},
	{"grpc-shed", "loadprobe-probe.json", "panel Responses per second by status code / A"},
	{"grpc-shed", "loadprobe-overview.json", "panel First-failure level / A"},
	{"grpc-limited", "loadprobe-probe.json", "panel Shedding, limiting, timeouts and refusals / B"},
	{"scale", "loadprobe-probe.json", "panel Contention σ over time / A"},
	{"scale", "loadprobe-probe.json", "panel Coherency κ over time / A"},
	{"scale", "loadprobe-probe.json", "panel Predicted peak N* over time / A"},
	{"scale", "loadprobe-probe.json", "panel Predicted peak N* over time / B"},
	{"limited", "loadprobe-overview.json", "panel Load requested now / B"},
	{"limited", "loadprobe-probe.json", "panel Open loop: offered vs achieved rate, and drops / A"},
	{"limited", "loadprobe-probe.json", "panel Open loop: send delay / A"},
	{"limited", "loadprobe-probe.json", "panel Open loop: send delay / B"},
	{"canary", "loadprobe-probe.json", "panel Open loop: send delay / B"},
	{"ws", "loadprobe-probe.json", "panel WebSocket handshakes per second by outcome / A"},
	{"ws", "loadprobe-probe.json", "panel WebSocket sessions closed by the server, by close code / A"},
	{"shop", "loadprobe-probe.json", "panel Flow steps: attempts and failures per second by step / A"},
	{"shop", "loadprobe-probe.json", "panel Flow steps: attempts and failures per second by step / B"},
	{"shop", "loadprobe-probe.json", "panel Flow steps: p50 and p99 latency by step / A"},
	{"shop", "loadprobe-probe.json", "panel Flow steps: p50 and p99 latency by step / B"},
	{"shop", "loadprobe-probe.json", "panel Flow steps: responses per second by step and status code / A"},
}

type mode struct {
	name  string
	flags []string
}

var modes = []mode{
	{"classic", nil},
	{"native", []string{"--enable-feature=native-histograms"}},
}

func TestDashboardsAgainstPrometheus(t *testing.T) {
	promBin := realpart.Find(t, "prometheus", "apt-get install --no-install-recommends prometheus")
	began := time.Now()
	dir := t.TempDir()
	bin := buildLoadprobe(t, dir)

	// The demo target the daemon will probe, and its gRPC service on a port
	// of its own that the restart below keeps.
	grpcAddr := freePort(t)
	target := startProc(t, "target (4 workers)", dir, bin, "target", "--listen=127.0.0.1:0", "--grpc-listen="+grpcAddr,
		fmt.Sprint("--workers=", workersBefore), "--work-time=10ms")
	targetAddr := target.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	target.waitLogAddr(t, `msg="Demo target serving gRPC" address=(\S+)`)
	promAddrs := make([]string, len(modes))
	for i := range modes {
		promAddrs[i] = freePort(t)
	}
	cfg := strings.NewReplacer("GRPCTARGET", grpcAddr, "TARGET", targetAddr, "PROM", promAddrs[0]).Replace(daemonConfig)
	cfgFile := filepath.Join(dir, "loadprobe.yml")
	writeFile(t, cfgFile, cfg)

	// Both Prometheus servers, with the short-window copies of the rule files,
	// before the daemon: they scrape it from its first second, so that they see
	// every level of its first runs. A ramp of which only the last level was
	// seen reads as a steady load to the steady-load rule.
	for _, f := range []string{"rules.yml", "alerts.yml"} {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), shortenWindows(string(raw), shortWindows))
	}
	daemonAddr := freePort(t)
	proms := make([]*prometheus, len(modes))
	for i, m := range modes {
		proms[i] = startPrometheus(t, promBin, dir, m, daemonAddr, targetAddr, promAddrs[i])
	}
	for _, p := range proms {
		waitHTTP(t, p.base+"/-/ready")
	}
	t.Logf("Prometheus servers ready (%.1fs after start)", since(began))

	// The daemon reads its runs back as a fleet of one through the first
	// Prometheus, so that the fleet's families are exported and evaluated too.
	// noop's stored history holds a capacity change, for the alert on it.
	daemon := startProc(t, "loadprobe daemon", dir, bin, "--config.file="+cfgFile, "--web.listen-address="+daemonAddr,
		"--fleet.prometheus-url=http://"+promAddrs[0], "--fleet.wait=10s", "--storage.path="+seedCapacityChange(t, dir, "noop"))
	daemon.waitLogAddr(t, `msg="Listening on" address=(\S+)`)
	waitHTTP(t, "http://"+daemonAddr+"/-/ready")
	t.Logf("demo target on %s, loadprobe daemon on %s (%.1fs after start)", targetAddr, daemonAddr, since(began))
	runs := recordRuns(t, daemonAddr, began)

	exported := newNameSet()
	exported.addExposition(t, "http://"+daemonAddr+"/metrics")

	// A completed ramp of "work", scraped, with its control done and the rules run;
	// the model's rules run on the fit of "scale", which may end after "work";
	// requests of the flow's steps scraped within the minute the range panels
	// look at; and a headroom of "work", which its first run may lack (the
	// other probes, its live traffic, have not run yet).
	ready := fmt.Sprintf(`loadprobe_running{job="loadprobe",probe="work"} == 0
and on () probe:loadprobe_capacity_throughput:median_7d{job="loadprobe",probe="work"}
and on () probe:loadprobe_model_peak_level:median_7d{job="loadprobe",probe="scale"}
and on () loadprobe_fleet_run_valid{job="loadprobe",probe="work"}
and on () count(loadprobe_run_last_completed_timestamp_seconds{job="loadprobe"}) >= %d
and on () sum(increase(loadprobe_requests_total{job="loadprobe",probe="shop",step!=""}[1m])) > 0
and on () loadprobe_headroom_ratio{job="loadprobe",probe="work"}`, len(configuredProbes))
	for _, p := range proms {
		p.waitData(t, ready, rampTimeout)
	}
	evalAt := time.Now()
	t.Logf("a ramp of %q completed and was scraped by both servers %.1fs after start", probeWork, since(began))
	exported.addExposition(t, "http://"+daemonAddr+"/metrics")

	exprs, err := expressions()
	if err != nil {
		t.Fatal(err)
	}
	artifact := map[string]any{"daemon": daemonAddr, "evaluated_at": evalAt.UTC().Format(time.RFC3339Nano),
		"rate_interval": rateInterval, "short_windows": shortWindows}
	var artifactMu sync.Mutex

	t.Run("metric-names", func(t *testing.T) {
		checkMetricNames(t, exprs, exported)
	})

	t.Run("expressions", func(t *testing.T) {
		for _, p := range proms {
			t.Run(p.mode.name, func(t *testing.T) {
				res := evaluateAll(t, p, exprs, daemonAddr, evalAt)
				artifactMu.Lock()
				artifact[p.mode.name] = res
				artifactMu.Unlock()
				checkRuleHealth(t, p)
			})
		}
	})

	// The Prometheus with native histograms reads each step's median from
	// its native histogram within 1% of the step's own, the summary's.
	t.Run("native-step-histogram", func(t *testing.T) {
		checkNativeStepQuantile(t, proms[1], evalAt)
	})

	// The steady-load rule (short windows) tells the canary from the ramps, though
	// the canary waits its turn behind them.
	// The telemetry of "work" reads the target's busy workers through the
	// first Prometheus: every completed run before the restart names them
	// its bottleneck at the pool's size, at or below its knee, and reads
	// the levels below it short of their limit. The knee is the pool's
	// size or, when the goodput there falls just short of 95% of the peak
	// (376/s against 398/s in one run under the race detector), the level
	// above it. A run whose first levels came before the first scrape of
	// the target reads nothing there, and is left out.
	t.Run("telemetry", func(t *testing.T) {
		checked := 0
		for _, r := range runs.all() {
			if r.Probe != probeWork || r.Result != "completed" || r.Knee == nil || *r.Knee < workersBefore || r.Saturation["1"] == nil {
				continue
			}
			checked++
			if b := r.Bottleneck; b == nil || b.Resource != "workers" || b.Level != workersBefore {
				t.Errorf("run %s: bottleneck %+v, want workers at the pool's size, %d connections (knee %g); saturation %v", r.Started, b, workersBefore, *r.Knee, r.Saturation)
			}
			for _, level := range []string{"1", "2"} {
				if v, ok := r.Saturation[level]["workers"]; !ok || v >= 0.8 {
					t.Errorf("run %s: level %s read workers %v (read: %v), want below 0.8 on a pool of %d", r.Started, level, v, ok, workersBefore)
				}
			}
		}
		if checked == 0 {
			t.Errorf("no completed run of %s with its knee at %d or above and a reading at 1 connection to check: %+v", probeWork, workersBefore, runs.all())
		}
	})

	t.Run("steady-load", func(t *testing.T) {
		for _, p := range proms {
			p.waitData(t, `probe:loadprobe_load:steady15m{job="loadprobe",probe="canary"}`, rampTimeout)
			// A ramp in its first level is one level so far: it reads as
			// steady until its next one, so only ramps not running now count.
			r, err := p.query(`probe:loadprobe_load:steady15m{job="loadprobe",probe!="canary"}
				unless on (job, instance, probe) loadprobe_running == 1`, time.Now())
			if err != nil || r.Series > 0 {
				t.Errorf("%s: probe:loadprobe_load:steady15m holds a ramp: %v %v", p.mode.name, r.Labels, err)
			}
		}
	})

	// Fewer workers on the same address: capacity falls to a quarter. The restart
	// follows the end of a run of "work" (and its control) by 3s at most, ~9s before
	// the next one starts, so that no run of it sees the target go away.
	last := runs.waitRestartPoint(t, probeWork, runsBeforeRestart, rampTimeout)
	t.Logf("restarting the target right after a run of %q ended (seen at +%.1fs)", probeWork, last.SeenAt)
	restartAt := time.Now()
	target.stop(t)
	target = startProc(t, "target (1 worker)", dir, bin, "target", "--listen="+targetAddr, "--grpc-listen="+grpcAddr,
		fmt.Sprint("--workers=", workersAfter), "--work-time=10ms")
	target.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	t.Logf("demo target restarted with %d worker on %s, %.1fs after start", workersAfter, targetAddr, since(began))

	t.Run("classic-vs-native", func(t *testing.T) {
		compareModes(t, exprs, exported, artifact["classic"], artifact["native"])
	})

	t.Run("capacity-drift-alert", func(t *testing.T) {
		for _, p := range proms {
			t.Run(p.mode.name, func(t *testing.T) {
				t.Parallel()
				tl := watchAlerts(t, p, restartAt)
				artifactMu.Lock()
				artifact[p.mode.name+"_alerts"] = tl
				artifactMu.Unlock()
			})
		}
	})

	artifact["runs"] = runs.report(t, probeWork)
	artifact["seconds"] = since(began)
	raw, err := json.MarshalIndent(artifact, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.ArtifactDir(), "expressions.json")
	writeFile(t, out, string(raw))
	t.Logf("evaluated expressions written to %s; the test took %.1fs", out, since(began))
}

func since(t time.Time) float64 { return math.Round(time.Since(t).Seconds()*10) / 10 }

// buildLoadprobe builds the module's main package into dir, as `make build` does
// (without the version stamps): the daemon and the target run as real processes,
// without the race detector the test binary may carry.
func buildLoadprobe(t *testing.T, dir string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "loadprobe")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	// go test puts its own GOROOT/bin first in PATH, so "go" is the toolchain under test.
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built %s in %.1fs", bin, since(start))
	return bin
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ---- processes ----

// tail keeps the last logTailBytes of a process's output.
type tail struct {
	mu  sync.Mutex
	buf []byte
	cut bool
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - 4*logTailBytes; over > 0 {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-logTailBytes:]...)
		w.cut = true
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
	}
	if w.cut || len(b) < len(w.buf) {
		return "[...]\n" + string(b)
	}
	return string(b)
}

type proc struct {
	name string
	cmd  *exec.Cmd
	out  *tail
	done chan struct{}
	err  error // after done
	once sync.Once
}

// startProc starts a process whose output is kept and shown, when the test
// fails, at its end; it is stopped when the test ends.
func startProc(t *testing.T, name, dir, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &tail{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("---- %s (%s), last output ----\n%s", p.name, strings.Join(p.cmd.Args, " "), p.out.String())
		}
	})
	return p
}

// stop sends SIGTERM and waits; a process still running after stopTimeout is killed.
func (p *proc) stop(t *testing.T) {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			t.Errorf("%s did not stop within %s of SIGTERM; killing it", p.name, stopTimeout)
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// waitLogAddr waits until the process logs a line matching re and returns its
// first group (the address it listens on).
func (p *proc) waitLogAddr(t *testing.T, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(startTimeout)
	for {
		if m := rx.FindStringSubmatch(p.out.String()); m != nil {
			return strings.Trim(m[1], `"`)
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before logging %q:\n%s", p.name, p.err, re, p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not log %q within %s:\n%s", p.name, re, startTimeout, p.out.String())
		}
	}
}

// waitHTTP polls url until it answers 200.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("%s did not answer 200 within %s: %s", url, startTimeout, last)
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// ---- Prometheus ----

type prometheus struct {
	mode mode
	base string
	proc *proc
}

const promConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yml, alerts.yml]
scrape_configs:
  - job_name: %s
    static_configs:
      - targets: [%q]
  # The target's workers are read per step of 2s: four scrapes in the
  # second of each window a step's value reads (docs/telemetry.md,
  # "Saturation and the bottleneck").
  - job_name: target
    scrape_interval: 250ms
    scrape_timeout: 250ms
    static_configs:
      - targets: [%q]
`

func startPrometheus(t *testing.T, bin, dir string, m mode, daemonAddr, targetAddr, addr string) *prometheus {
	t.Helper()
	cfg := filepath.Join(dir, "prometheus-"+m.name+".yml")
	writeFile(t, cfg, fmt.Sprintf(promConfig, scrapeJobName, daemonAddr, targetAddr))
	args := append([]string{
		"--config.file=" + cfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data-"+m.name),
		"--web.listen-address=" + addr,
		"--rules.alert.resend-delay=1s",
	}, m.flags...)
	p := &prometheus{mode: m, base: "http://" + addr}
	p.proc = startProc(t, "prometheus "+m.name, dir, bin, args...)
	return p
}

// apiResponse is the envelope of Prometheus's HTTP API.
type apiResponse struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
	Data      json.RawMessage `json:"data"`
}

type queryData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

type series struct {
	Metric     map[string]string `json:"metric"`
	Value      []any             `json:"value"`
	Histogram  []any             `json:"histogram"`
	Values     [][]any           `json:"values"`
	Histograms [][]any           `json:"histograms"`
}

// result is what a query returned, reduced to what the test judges.
type result struct {
	Type       string   `json:"type,omitempty"`
	Series     int      `json:"series"`
	Histograms int      `json:"native_histograms,omitempty"` // series holding native histograms
	NaN        int      `json:"nan,omitempty"`               // series whose (last) value is NaN
	Labels     []string `json:"labels,omitempty"`            // the first few series
	// Range queries: the mean of each series' finite values, by its labels.
	Means    map[string]float64 `json:"means,omitempty"`
	Warnings []string           `json:"warnings,omitempty"`
}

func (p *prometheus) api(path string, form url.Values) (json.RawMessage, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, fmt.Errorf("%s: HTTP %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	if r.Status != "success" {
		return nil, r.Warnings, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	return r.Data, r.Warnings, nil
}

func promTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// query runs an instant query at ts.
func (p *prometheus) query(q string, ts time.Time) (result, error) {
	data, warnings, err := p.api("/api/v1/query", url.Values{"query": {q}, "time": {promTime(ts)}})
	if err != nil {
		return result{}, err
	}
	r, err := reduce(data)
	r.Warnings = warnings
	return r, err
}

// queryRange runs a range query over [start, end] at a 1s step, as a Grafana panel
// with a 1s interval would.
func (p *prometheus) queryRange(q string, start, end time.Time) (result, error) {
	data, warnings, err := p.api("/api/v1/query_range", url.Values{"query": {q},
		"start": {promTime(start)}, "end": {promTime(end)}, "step": {"1"}})
	if err != nil {
		return result{}, err
	}
	r, err := reduce(data)
	r.Warnings = warnings
	return r, err
}

func reduce(data json.RawMessage) (result, error) {
	var d queryData
	if err := json.Unmarshal(data, &d); err != nil {
		return result{}, err
	}
	r := result{Type: d.ResultType}
	switch d.ResultType {
	case "scalar", "string":
		r.Series = 1
		var v []any
		if err := json.Unmarshal(d.Result, &v); err == nil && len(v) == 2 && v[1] == "NaN" {
			r.NaN = 1
		}
		return r, nil
	case "vector", "matrix":
	default:
		return r, fmt.Errorf("unknown result type %q", d.ResultType)
	}
	var ss []series
	if err := json.Unmarshal(d.Result, &ss); err != nil {
		return r, err
	}
	r.Series = len(ss)
	for _, s := range ss {
		if n, sum := 0, 0.0; len(s.Values) > 0 {
			for _, v := range s.Values {
				str, _ := v[1].(string)
				if f, err := strconv.ParseFloat(str, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
					n++
					sum += f
				}
			}
			if n > 0 {
				if r.Means == nil {
					r.Means = map[string]float64{}
				}
				r.Means[labelString(s.Metric)] = sum / float64(n)
			}
		}
		if s.Histogram != nil || len(s.Histograms) > 0 {
			r.Histograms++
		}
		switch {
		case len(s.Value) == 2 && s.Value[1] == "NaN":
			r.NaN++
		case len(s.Values) > 0 && len(s.Values[len(s.Values)-1]) == 2 && s.Values[len(s.Values)-1][1] == "NaN":
			r.NaN++
		}
		if len(r.Labels) < 5 {
			r.Labels = append(r.Labels, labelString(s.Metric))
		}
	}
	return r, nil
}

// levelValues is an instant query's value by level.
func (p *prometheus) levelValues(t *testing.T, q string, at time.Time) map[string]float64 {
	t.Helper()
	data, _, err := p.api("/api/v1/query", url.Values{"query": {q}, "time": {promTime(at)}})
	var d struct{ Result []series }
	if err == nil {
		err = json.Unmarshal(data, &d)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	values := map[string]float64{}
	for _, s := range d.Result {
		if str, ok := s.Value[1].(string); ok {
			if f, err := strconv.ParseFloat(str, 64); err == nil {
				values[s.Metric["level"]] = f
			}
		}
	}
	return values
}

// checkNativeStepQuantile checks that histogram_quantile over the sum of
// a step's native histograms (one replica's: a fleet's sums the same
// way) reads the step's p50 within 1%, at every level of the last run.
// Not its p99: histogram_quantile takes the sample of rank ⌈qN⌉, the
// step's HDR the one of rank round(qN), and in the sparse tail of a
// step of a few hundred samples those two differ by several percent
// (docs/metrics.md, "Per step"); the median's neighbours do not.
func checkNativeStepQuantile(t *testing.T, p *prometheus, at time.Time) {
	sel := fmt.Sprintf(`job=%q,probe=%q`, scrapeJobName, probeWork)
	native := p.levelValues(t, `histogram_quantile(0.5, sum by (level) (loadprobe_step_latency_histogram_seconds{`+sel+`}))`, at)
	exact := p.levelValues(t, `loadprobe_step_latency_seconds{`+sel+`,quantile="0.5"}`, at)
	if len(exact) == 0 {
		t.Fatalf("no step p50 of %s at %s", probeWork, at)
	}
	for level, want := range exact {
		got, ok := native[level]
		t.Logf("level %s: p50 %.4fms from the native histogram, %.4fms from the step", level, 1e3*got, 1e3*want)
		if !ok || math.Abs(got-want) > 0.01*want {
			t.Errorf("level %s: p50 %v (read: %v) from the native histogram, want within 1%% of the step's %v", level, got, ok, want)
		}
	}
}

func labelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(m["__name__"])
	b.WriteByte('{')
	first := true
	for _, k := range keys {
		if k == "__name__" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// waitData polls an instant query until it returns a series.
func (p *prometheus) waitData(t *testing.T, q string, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	var last string
	for time.Now().Before(deadline) {
		r, err := p.query(q, time.Now())
		switch {
		case err != nil:
			last = err.Error()
		case r.Series > 0:
			return
		default:
			last = "no data"
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("prometheus %s: no data within %s for\n%s\nlast: %s", p.mode.name, bound, q, last)
}

// ---- metric names ----

// nameSet holds every series name loadprobe's /metrics can put into Prometheus.
type nameSet struct{ names map[string]string } // name -> family type

func newNameSet() *nameSet { return &nameSet{names: map[string]string{}} }

var typeLine = regexp.MustCompile(`^# TYPE (\S+) (\S+)$`)

// addExposition adds the families of a text exposition: every family's name, and
// for histograms and summaries the names of their classic series too (a Prometheus
// with native histograms stores the histogram under its family name).
func (s *nameSet) addExposition(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := typeLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, typ := m[1], m[2]
		s.names[name] = typ
		switch typ {
		case "histogram":
			s.names[name+"_bucket"] = typ
			fallthrough
		case "summary":
			s.names[name+"_sum"] = typ
			s.names[name+"_count"] = typ
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// checkMetricNames fails on a loadprobe series or recording rule that an
// expression names but that neither /metrics nor rules.yml provides: such a
// panel would show "No data" forever.
func checkMetricNames(t *testing.T, exprs []expr, exported *nameSet) {
	known := map[string]string{}
	for n, typ := range exported.names {
		known[n] = "exported " + typ
	}
	for _, e := range exprs {
		if e.Kind == "record" {
			known[strings.TrimPrefix(e.Source, "record ")] = "recording rule"
		}
	}
	checked := 0
	for _, e := range exprs {
		for _, n := range loadprobeNames(e.Expr) {
			checked++
			if _, ok := known[n]; !ok {
				t.Errorf("%s %s: %s is neither exported by loadprobe (/metrics) nor recorded by rules.yml", e.File, e.Source, n)
			}
		}
	}
	t.Logf("%d metric name references checked against %d known names", checked, len(known))
}

// ---- expressions ----

type exprRecord struct {
	File       string  `json:"file"`
	Source     string  `json:"source"`
	Kind       string  `json:"kind"`
	Probe      string  `json:"probe,omitempty"`
	Query      string  `json:"query"`
	Instant    bool    `json:"instant"`
	ExpectData bool    `json:"expect_data"`
	Why        string  `json:"why,omitempty"`
	Result     result  `json:"result"`                 // instant query at the evaluation time
	Range      *result `json:"range_result,omitempty"` // range panels: query_range over the last minute
	Error      string  `json:"error,omitempty"`
}

type modeResult struct {
	Evaluated   int          `json:"evaluated"`
	WithData    int          `json:"with_data"`
	ExpectData  int          `json:"expect_data"`
	Expressions []exprRecord `json:"expressions"`
	PerProbe    []exprRecord `json:"per_probe_checks"`
}

func vars(instance, probe string) map[string]string {
	return map[string]string{"job": scrapeJobName, "instance": instance, "probe": probe,
		"__rate_interval": rateInterval, "__interval": "1s", "__range": "1m", "__range_s": "60"}
}

func hasData(rec exprRecord) bool {
	if rec.Range != nil {
		return rec.Range.Series > 0
	}
	return rec.Result.Series > 0
}

// evalExpr runs one expression as its panel (or rule) would: instant at evalAt,
// and for range panels also as a range query over the minute before.
func evalExpr(p *prometheus, e expr, probe, query string, evalAt time.Time) exprRecord {
	rec := exprRecord{File: e.File, Source: e.Source, Kind: e.Kind, Probe: probe, Query: query,
		Instant: e.Instant, ExpectData: e.ExpectData, Why: e.Why}
	var errs []string
	r, err := p.query(query, evalAt)
	if err != nil {
		errs = append(errs, "instant query: "+err.Error())
	}
	rec.Result = r
	if e.Kind == "panel" && !e.Instant {
		rr, err := p.queryRange(query, evalAt.Add(-time.Minute), evalAt)
		if err != nil {
			errs = append(errs, "range query: "+err.Error())
		}
		rec.Range = &rr
	}
	rec.Error = strings.Join(errs, "; ")
	return rec
}

func evaluateAll(t *testing.T, p *prometheus, exprs []expr, instance string, evalAt time.Time) modeResult {
	var mr modeResult
	for _, e := range exprs {
		q := e.Expr
		probe := ""
		if e.Kind == "panel" || e.Kind == "variable" {
			probe = probeWork
			q = substituteTemplateVars(q, vars(instance, probe))
		}
		rec := evalExpr(p, e, probe, q, evalAt)
		mr.Evaluated++
		if rec.Error != "" {
			t.Errorf("%s %s: %s\n%s", e.File, e.Source, rec.Error, q)
		}
		if hasData(rec) {
			mr.WithData++
		}
		if e.ExpectData {
			mr.ExpectData++
			if rec.Error == "" && !hasData(rec) {
				t.Errorf("%s %s: no data (ExpectData) for probe %q\n%s", e.File, e.Source, probe, q)
			}
		}
		for _, w := range rec.Result.Warnings {
			t.Logf("%s %s: warning: %s", e.File, e.Source, w)
		}
		mr.Expressions = append(mr.Expressions, rec)
	}

	// The optional panels the config fills, each for its probe.
	for _, pe := range probeExpect {
		i := slices.IndexFunc(exprs, func(e expr) bool {
			return e.File == "dashboards/"+pe.file && e.Source == pe.source
		})
		if i < 0 {
			t.Errorf("probeExpect: no expression %s %s", pe.file, pe.source)
			continue
		}
		e := exprs[i]
		rec := evalExpr(p, e, pe.probe, substituteTemplateVars(e.Expr, vars(instance, pe.probe)), evalAt)
		rec.ExpectData = true
		switch {
		case rec.Error != "":
			t.Errorf("%s %s (probe %q): %s", e.File, e.Source, pe.probe, rec.Error)
		case !hasData(rec):
			t.Errorf("%s %s: no data for probe %q, whose config should fill it\n%s", e.File, e.Source, pe.probe, rec.Query)
		}
		mr.PerProbe = append(mr.PerProbe, rec)
	}

	t.Logf("%s: %d expressions evaluated, %d returned data (%d must); %d per-probe checks", p.mode.name, mr.Evaluated, mr.WithData, mr.ExpectData, len(mr.PerProbe))
	return mr
}

// checkRuleHealth fails on a loaded rule whose last evaluation failed: errors such
// as many-to-many matching show only at run time, on data.
func checkRuleHealth(t *testing.T, p *prometheus) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/api/v1/rules", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				File  string `json:"file"`
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			n++
			if rule.Health != "ok" {
				t.Errorf("rule %s (%s): health %q: %s", rule.Name, filepath.Base(g.File), rule.Health, rule.LastError)
			}
		}
	}
	if n == 0 {
		t.Error("no rules loaded")
	}
}

// ---- alerts ----

type alertEvent struct {
	Alert   string  `json:"alert"`
	Probe   string  `json:"probe,omitempty"`
	State   string  `json:"state"`
	Seconds float64 `json:"seconds_after_restart"`
	Value   string  `json:"value,omitempty"`
}

type alertTimeline struct {
	Events []alertEvent `json:"events"`
	// The capacity of "work" as Prometheus saw it, on each change.
	Capacity []alertEvent `json:"capacity"`
}

// watchAlerts polls /api/v1/alerts from the restart until the drift alert of
// "work" fires (or alertTimeout), recording when each alert first showed in
// each state, and fails unless the drift alert was at least pending.
func watchAlerts(t *testing.T, p *prometheus, restartAt time.Time) alertTimeline {
	var tl alertTimeline
	seen := map[string]bool{}
	lastCap := ""
	deadline := restartAt.Add(alertTimeout)
	pending, firing := -1.0, -1.0
	for time.Now().Before(deadline) && firing < 0 {
		now := time.Now()
		data, _, err := p.apiGet("/api/v1/alerts")
		if err != nil {
			t.Logf("alerts: %v", err)
		} else {
			var d struct {
				Alerts []struct {
					Labels      map[string]string `json:"labels"`
					Annotations map[string]string `json:"annotations"`
					State       string            `json:"state"`
					Value       string            `json:"value"`
				} `json:"alerts"`
			}
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			for _, a := range d.Alerts {
				key := a.Labels["alertname"] + "|" + a.Labels["probe"] + "|" + a.State
				if seen[key] {
					continue
				}
				seen[key] = true
				checkAnnotations(t, a.Labels["alertname"], a.State, a.Annotations)
				ev := alertEvent{Alert: a.Labels["alertname"], Probe: a.Labels["probe"], State: a.State,
					Seconds: math.Round(now.Sub(restartAt).Seconds()*10) / 10, Value: a.Value}
				tl.Events = append(tl.Events, ev)
				if ev.Alert == driftAlert && ev.Probe == probeWork {
					switch ev.State {
					case "pending":
						pending = ev.Seconds
					case "firing":
						firing = ev.Seconds
					}
				}
			}
		}
		if v, err := p.scalar(`loadprobe_capacity_throughput{probe="work"}`, now); err == nil && v != lastCap {
			lastCap = v
			tl.Capacity = append(tl.Capacity, alertEvent{Alert: "capacity", Probe: probeWork, State: "value",
				Seconds: math.Round(now.Sub(restartAt).Seconds()*10) / 10, Value: v})
		}
		time.Sleep(pollInterval)
	}
	for _, ev := range tl.Capacity {
		t.Logf("+%5.1fs capacity of %s: %s req/s", ev.Seconds, ev.Probe, ev.Value)
	}
	for _, ev := range tl.Events {
		t.Logf("+%5.1fs %s{probe=%q} %s (value %s)", ev.Seconds, ev.Alert, ev.Probe, ev.State, ev.Value)
	}
	switch {
	case firing >= 0:
		t.Logf("%s: %s pending at +%.1fs, firing at +%.1fs after the restart", p.mode.name, driftAlert, pending, firing)
	case pending >= 0:
		t.Logf("%s: %s pending at +%.1fs, not firing within %s", p.mode.name, driftAlert, pending, alertTimeout)
	default:
		t.Errorf("%s: %s{probe=%q} neither pending nor firing within %s of the restart with %d worker", p.mode.name, driftAlert, probeWork, alertTimeout, workersAfter)
	}
	return tl
}

func (p *prometheus) apiGet(path string) (json.RawMessage, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var r apiResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, nil, err
	}
	if r.Status != "success" {
		return nil, r.Warnings, errors.New(r.Error)
	}
	return r.Data, r.Warnings, nil
}

// scalar returns the value of the first series of an instant query, as Prometheus formats it.
func (p *prometheus) scalar(q string, ts time.Time) (string, error) {
	data, _, err := p.api("/api/v1/query", url.Values{"query": {q}, "time": {promTime(ts)}})
	if err != nil {
		return "", err
	}
	var d struct {
		Result []series `json:"result"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	if len(d.Result) == 0 || len(d.Result[0].Value) != 2 {
		return "", errors.New("no data")
	}
	s, _ := d.Result[0].Value[1].(string)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		s = strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
	}
	return s, nil
}

// runRecorder polls the daemon's /api/v1/results and keeps every finished run
// once, so that the test can tell which runs the alerts saw and why a run was
// invalid.
type runRecorder struct {
	addr  string
	began time.Time
	stop  chan struct{}
	done  chan struct{}

	mu   sync.Mutex
	seen map[string]bool
	runs []runRecord
}

type runRecord struct {
	Probe     string   `json:"probe"`
	Started   string   `json:"started"`
	SeenAt    float64  `json:"seen_at_seconds"` // after the test began
	Result    string   `json:"result"`
	Valid     bool     `json:"valid"`
	Capacity  *float64 `json:"capacity,omitempty"`
	Level     *float64 `json:"capacity_level,omitempty"`
	Knee      *float64 `json:"knee,omitempty"`
	Diagnosis []string `json:"diagnosis"`
	// Bottleneck and Saturation are what the run's telemetry read: the
	// bottleneck's resource and level, each level's resources.
	Bottleneck *bottleneck                   `json:"bottleneck,omitempty"`
	Saturation map[string]map[string]float64 `json:"saturation,omitempty"`
}

type bottleneck struct {
	Resource string  `json:"resource"`
	Level    float64 `json:"level"`
}

func recordRuns(t *testing.T, addr string, began time.Time) *runRecorder {
	rr := &runRecorder{addr: addr, began: began, stop: make(chan struct{}), done: make(chan struct{}), seen: map[string]bool{}}
	go func() {
		defer close(rr.done)
		tick := time.NewTicker(pollInterval)
		defer tick.Stop()
		for {
			rr.poll()
			select {
			case <-rr.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(rr.close)
	return rr
}

func (rr *runRecorder) close() {
	select {
	case <-rr.stop:
	default:
		close(rr.stop)
	}
	<-rr.done
}

func (rr *runRecorder) poll() {
	resp, err := http.Get("http://" + rr.addr + "/api/v1/results")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var d struct {
		Probes []struct {
			Name           string `json:"name"`
			Started        string `json:"started"`
			Result         string `json:"result"`
			Valid          bool   `json:"valid"`
			BreakingPoints map[string]*struct {
				Level float64 `json:"level"`
			} `json:"breaking_points"`
			Capacity *struct {
				Level      float64 `json:"level"`
				Throughput float64 `json:"throughput"`
			} `json:"capacity"`
			Diagnosis  []string    `json:"diagnosis"`
			Bottleneck *bottleneck `json:"bottleneck"`
			Steps      []struct {
				Level      float64            `json:"level"`
				Saturation map[string]float64 `json:"saturation"`
			} `json:"steps"`
		} `json:"probes"`
	}
	if json.NewDecoder(resp.Body).Decode(&d) != nil {
		return
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, p := range d.Probes {
		key := p.Name + "|" + p.Started
		if p.Result == "running" || rr.seen[key] {
			continue
		}
		rr.seen[key] = true
		rec := runRecord{Probe: p.Name, Started: p.Started, SeenAt: since(rr.began), Result: p.Result, Valid: p.Valid, Diagnosis: p.Diagnosis}
		if p.Capacity != nil {
			rec.Capacity, rec.Level = &p.Capacity.Throughput, &p.Capacity.Level
		}
		if k := p.BreakingPoints["knee"]; k != nil {
			rec.Knee = &k.Level
		}
		rec.Bottleneck = p.Bottleneck
		for _, st := range p.Steps {
			if st.Saturation != nil {
				if rec.Saturation == nil {
					rec.Saturation = map[string]map[string]float64{}
				}
				rec.Saturation[fmt.Sprint(st.Level)] = st.Saturation
			}
		}
		rr.runs = append(rr.runs, rec)
	}
}

// waitRestartPoint waits until at least n runs of probe have ended, the last of
// them less than 3 seconds ago, and returns that last run.
func (rr *runRecorder) waitRestartPoint(t *testing.T, probe string, n int, bound time.Duration) runRecord {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		rr.mu.Lock()
		var ended []runRecord
		for _, r := range rr.runs {
			if r.Probe == probe {
				ended = append(ended, r)
			}
		}
		rr.mu.Unlock()
		if len(ended) >= n && since(rr.began)-ended[len(ended)-1].SeenAt < 3 {
			return ended[len(ended)-1]
		}
		time.Sleep(pollInterval / 5)
	}
	t.Fatalf("no run of %s ended after the first %d within %s", probe, n-1, bound)
	return runRecord{}
}

// all is the runs ended so far.
func (rr *runRecorder) all() []runRecord {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return slices.Clone(rr.runs)
}

// report stops the recorder, logs the runs of probe (every diagnosis of an
// invalid one) and returns all runs.
func (rr *runRecorder) report(t *testing.T, probe string) []runRecord {
	rr.close()
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, r := range rr.runs {
		if r.Probe != probe {
			continue
		}
		line := fmt.Sprintf("run of %s seen at +%.1fs: %s, valid %v", r.Probe, r.SeenAt, r.Result, r.Valid)
		if r.Capacity != nil {
			line += fmt.Sprintf(", capacity %.0f/s at %g", *r.Capacity, *r.Level)
		}
		if r.Knee != nil {
			line += fmt.Sprintf(", knee %g", *r.Knee)
		}
		if !r.Valid || r.Capacity == nil || r.Result != "completed" {
			line += "; " + strings.Join(r.Diagnosis, "; ")
		}
		t.Log(line)
	}
	return slices.Clone(rr.runs)
}

// compareModes checks that the histogram panels say the same in both modes: the
// classic queries (buckets, _sum) and their native fallbacks must agree on every
// series they share, within the error of the classic buckets (a factor of 2 at
// most; the Little's-law sum is exact in both). A native fallback that aggregates
// differently, or reads another quantity, shows here rather than in Grafana.
func compareModes(t *testing.T, exprs []expr, exported *nameSet, classicRes, nativeRes any) {
	c, ok1 := classicRes.(modeResult)
	n, ok2 := nativeRes.(modeResult)
	if !ok1 || !ok2 || len(c.Expressions) != len(exprs) || len(n.Expressions) != len(exprs) {
		t.Skip("an expressions subtest did not complete")
	}
	compared := 0
	for i, e := range exprs {
		histogram := false
		for _, name := range loadprobeNames(e.Expr) {
			histogram = histogram || exported.names[name] == "histogram"
		}
		cr, nr := c.Expressions[i].Range, n.Expressions[i].Range
		if !histogram || cr == nil || nr == nil {
			continue
		}
		if nr.Histograms > 0 {
			t.Logf("%s %s: native mode returns native histograms (%d series), classic mode %d bucket series; not compared", e.File, e.Source, nr.Histograms, cr.Series)
			continue
		}
		for labels, cv := range cr.Means {
			nv, ok := nr.Means[labels]
			if !ok {
				t.Errorf("%s %s: series %s has values in classic mode only", e.File, e.Source, labels)
				continue
			}
			compared++
			if ratio := nv / cv; !(ratio >= 0.5 && ratio <= 2) {
				t.Errorf("%s %s: %s: classic mean %.4g, native mean %.4g (ratio %.2f)", e.File, e.Source, labels, cv, nv, ratio)
			} else {
				t.Logf("%s %s: %s: classic %.4g, native %.4g", e.File, e.Source, labels, cv, nv)
			}
		}
		for labels := range nr.Means {
			if _, ok := cr.Means[labels]; !ok {
				t.Errorf("%s %s: series %s has values in native mode only", e.File, e.Source, labels)
			}
		}
	}
	if compared == 0 {
		t.Error("no histogram panel had values to compare")
	}
}

// checkAnnotations fails on an annotation that Prometheus could not render: a
// template error, a missing value, a printf verb gone wrong, or a query template
// that found nothing (an empty value where a number belongs).
func checkAnnotations(t *testing.T, alert, state string, annotations map[string]string) {
	for _, k := range []string{"summary", "description", "runbook_url"} {
		if strings.TrimSpace(annotations[k]) == "" {
			t.Errorf("%s: annotation %s is empty", alert, k)
		}
	}
	for k, v := range annotations {
		for _, bad := range []string{"error expanding", "<no value>", "%!", "NaN", " is  req/s", " is .", " is ;"} {
			if strings.Contains(v, bad) {
				t.Errorf("%s: annotation %s holds %q: %s", alert, k, bad, v)
			}
		}
	}
	if alert == driftAlert && state == "firing" {
		t.Logf("%s description: %s", alert, annotations["description"])
	}
}
