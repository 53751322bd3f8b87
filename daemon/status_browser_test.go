package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/realpart"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

const browserConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "http://127.0.0.1:8080/work"}
    load: {concurrency: [1, 2, 4, 8, 16], step_duration: 500ms}
    rules: {latency_budget: 60ms, knee_fraction: 0.8}
  - name: shed
    request: {url: "http://127.0.0.1:8080/shed"}
    load: {concurrency: [2, 4, 8, 16], step_duration: 300ms}
    abort: {error_ratio: 1}
`

// TestStatusPageInBrowser loads the status page of a daemon that finished a
// ramp against the demo target in headless Chromium: the chart and the
// breaking points are in the rendered page, and a screenshot of it is
// kept as a test artifact (go test -artifacts keeps it).
func TestStatusPageInBrowser(t *testing.T) {
	realpart.Find(t, "chromium", "apt-get install --no-install-recommends chromium") // before any load
	// A generator on a machine that other work keeps busy adds its own
	// time to every request, and a saturated generator looks like a
	// server that stopped scaling (docs/design.md, "The control probe"). 40ms of work and a
	// knee at 80% of the peak keep the knee at the pool size unless the
	// generator adds 10ms to every request; at 10ms of work and 95% it
	// moved to 8 under a benchmark running beside the test.
	srv := httptest.NewServer(target.New(target.Options{Workers: 4, WorkTime: 40 * time.Millisecond}))
	t.Cleanup(srv.Close)
	td := startDaemonWith(t, browserConfig, daemonOptions{target: srv.URL})
	td.waitRun(t, "work", 1)
	td.waitRun(t, "shed", 1)

	start := time.Now()
	dom := string(realpart.Chromium(t, "--dump-dom", td.url+"/"))
	t.Logf("chromium --dump-dom took %s", time.Since(start).Round(time.Millisecond))
	for _, re := range []string{
		`<svg class="ramp"[^>]*>`,
		`<polyline class="good" points="[0-9., ]+"`,
		`<polyline class="lat" points="[0-9., ]+"`,
		`<g class="mark knee">`,
		`<g class="mark budget">`,
		`<g class="mark failure">`,
		// The /work pool has 4 workers: the knee is at 4 connections.
		`<td class="knee">4 connections<div class="sub">goodput [0-9.]+/s</div>`,
		// /shed answers 503 above 8 in flight.
		`<td class="first-failure">16 connections<div class="sub">goodput [0-9.]+/s</div>`,
		// ... and its 16-connection level's error ratio stands as a column.
		`<g class="errors"><rect [^>]*><title>16 connections: [0-9.]+% of attempts failed</title>`,
		// Each run's scalability model, a fit or a verdict, under its chart.
		`<p class="model">model: (USL σ|no fit \()`,
	} {
		if !regexp.MustCompile(re).MatchString(dom) {
			t.Errorf("the rendered page has no match for %s", re)
		}
	}
	// The page shows the breaking points the run found, whatever a busy
	// machine made of the p99 at each level.
	var results struct{ Probes []result.Result }
	if err := json.Unmarshal([]byte(td.get(t, "/api/v1/results")), &results); err != nil {
		t.Fatal(err)
	}
	for _, r := range results.Probes {
		if r.Name != "work" {
			continue
		}
		for class, p := range map[string]*result.Point{
			"knee": r.BreakingPoints.Knee, "latency-budget": r.BreakingPoints.LatencyBudget,
			"first-failure": r.BreakingPoints.FirstFailure, "capacity": r.Capacity,
		} {
			want := `<td class="` + class + `">—</td>`
			switch {
			case p == nil && class != "capacity":
				want = fmt.Sprintf(`<td class="%s">not reached<div class="sub">up to %s</div>`, class, r.Words().Level(r.ReachedUpTo))
			case p != nil:
				want = fmt.Sprintf(`<td class="%s">%s<div class="sub">goodput `, class, r.Words().Level(p.Level))
			}
			if !strings.Contains(dom, want) {
				t.Errorf("the rendered page lacks %s, the %s of the run in /api/v1/results", want, class)
			}
		}
	}
	if n := strings.Count(dom, `<svg class="ramp"`); n != 2 {
		t.Errorf("%d charts, want 2 (work and shed)", n)
	}
	if t.Failed() {
		t.Logf("rendered DOM:\n%s", dom)
	}

	realpart.Screenshot(t, td.url+"/", "status.png")
}

// A daemon with --storage.path draws each probe's stored runs: after three
// runs, headless Chromium finds the history chart with a capacity dot and
// a knee dot for each, and the store holds the three. The ramp goes two
// levels past /work's knee at 4, and its knee band is twice the default:
// a knee read at the last level is not reached, and on a busy machine (the
// race detector's CI) one level's 300 ms read 7% below 16's, which left a
// run's knee at its last level.
func TestHistoryChartInBrowser(t *testing.T) {
	realpart.Find(t, "chromium", "apt-get install --no-install-recommends chromium") // before any load
	storage := t.TempDir()
	td := startDaemonWith(t, `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "http://127.0.0.1:8080/work"}
    load: {concurrency: [1, 2, 4, 8, 16], step_duration: 300ms}
    rules: {knee_fraction: 0.9}
    schedule: {interval: 2s}
`, daemonOptions{storage: storage})
	td.waitRun(t, "work", 3)

	dom := string(realpart.Chromium(t, "--dump-dom", td.url+"/"))
	chart := regexp.MustCompile(`(?s)<div class="history" id="history-work">.*?</svg>`).FindString(dom)
	if chart == "" {
		t.Fatalf("the rendered page has no history chart of work:\n%s", dom)
	}
	good := regexp.MustCompile(`<circle class="good" [^>]*><title>run [^<]*: capacity [0-9.]+/s at [0-9]+ connections?</title>`).FindAllString(chart, -1)
	knee := regexp.MustCompile(`<circle class="knee" [^>]*><title>run [^<]*: knee at [0-9]+ connections? \(goodput [0-9.]+/s\)</title>`).FindAllString(chart, -1)
	if len(good) < 3 || len(good) != len(knee) {
		t.Errorf("the history chart has %d capacity and %d knee dots, want one of each for at least 3 runs:\n%s", len(good), len(knee), chart)
	}
	stored, err := os.ReadFile(filepath.Join(storage, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Probes []struct {
			History []state.Run `json:"history"`
		} `json:"probes"`
	}
	if err := json.Unmarshal(stored, &file); err != nil || len(file.Probes) != 1 || len(file.Probes[0].History) < 3 {
		t.Errorf("the store holds %+v (%v), want work's history of at least 3 runs", file, err)
	}
	realpart.Screenshot(t, td.url+"/", "history.png")
}

// crossOriginForm is a page on another origin that submits a form, as
// text/plain, to the daemon's POST /-/pause as soon as it loads.
const crossOriginForm = `<!DOCTYPE html><html><body>
<form id="f" method="POST" enctype="text/plain" action="DAEMON/-/pause"><input name="x" value="1"></form>
<script>document.getElementById("f").submit()</script>
</body></html>`

// A page a visitor opens on another origin submits a form to the daemon's
// /-/pause in headless Chromium: the daemon refuses it, and load goes on.
func TestCrossOriginFormCannotPauseInBrowser(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, testkit.GoodConfig, true)
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, strings.Replace(crossOriginForm, "DAEMON", td.url, 1))
	}))
	t.Cleanup(attacker.Close)
	dom := string(realpart.Chromium(t, "--virtual-time-budget=5000", "--dump-dom", attacker.URL+"/"))
	// The browser followed the form to the daemon's answer: the request
	// reached it, and was refused.
	testkit.Contains(t, "the page the form led to", dom, "Refused: a request from another origin cannot stop all load over HTTP.")
	testkit.Contains(t, "/metrics after the form", td.get(t, "/metrics"), "loadprobe_paused 0")
}
