package statuspage

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"golang.org/x/net/html"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// probe is a probe of a concurrency ramp over levels, with the default
// sections, as the status page reads it.
func probe(name string, levels ...int) *plan.Probe {
	d := config.DefaultProbe
	d.Load.Concurrency = levels
	return &plan.Probe{Name: name, Load: d.Load, Rules: d.Rules, Abort: d.Abort, Guard: d.Guard, Schedule: d.Schedule,
		Request: &plan.Request{URL: &url.URL{Scheme: "http", Host: "127.0.0.1:8080", Path: "/"}}}
}

// finished is a completed ramp whose three rules fired at 4, 8 and 16.
func finished(name string, started time.Time) *result.Result {
	r := &result.Result{Name: name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Started: started, DurationSeconds: 27.5, Valid: true}
	for i, lv := range []float64{1, 2, 4, 8, 16} {
		good := []float64{100, 200, 400, 405, 300}[i]
		r.Steps = append(r.Steps, result.Step{Level: lv, Goodput: good, Throughput: good,
			Latency: result.Latency{P99: []float64{0.011, 0.012, 0.014, 0.25, 0.5}[i]}})
	}
	r.PeakThroughput = 405
	r.BreakingPoints = result.BreakingPoints{
		Knee:          &result.Point{Level: 4, Throughput: 400},
		LatencyBudget: &result.Point{Level: 8, Throughput: 405},
		FirstFailure:  &result.Point{Level: 16, Throughput: 300},
	}
	r.Capacity = &result.Point{Level: 4, Throughput: 400}
	r.FallsPastPeak = true // 300/s at 16
	r.Diagnosis = []string{"throughput stopped improving at 4 connections", "a <b>bold</b> claim"}
	return r
}

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Result(), string(b)
}

func TestStatusPage(t *testing.T) {
	now := time.Now()
	states := []state.Probe{
		{Probe: probe("work", 1, 2, 4, 8, 16), Last: finished("work", now.Add(-90*time.Second)), LastCompleted: now.Add(-60 * time.Second), Next: now.Add(59 * time.Minute)},
		{Probe: probe("fresh", 1, 2)},
		{Probe: probe("queued", 1, 2), Waiting: true, WaitingFor: "127.0.0.1 is busy with canary (continuous)"},
		{Probe: probe("busy", 1, 2, 4), Current: &result.Result{Name: "busy", Ended: result.ResultRunning, Started: now, Steps: []result.Step{{Level: 1, Goodput: 50}}}},
	}
	h := StatusHandler("(version=1.2.3)", []Link{{Href: "/metrics", Text: "Metrics"}}, func() []state.Probe { return states }, notPaused)
	resp, body := get(t, h, "/")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		// Every figure is named: the goodput under each level.
		`<td class="knee">4 connections<div class="sub">goodput 400/s</div></td>`,
		`<td class="latency-budget">8 connections<div class="sub">goodput 405/s</div></td>`,
		`<td class="first-failure">16 connections<div class="sub">goodput 300/s</div></td>`,
		`<td class="capacity">4 connections<div class="sub">goodput 400/s</div><div class="sub falls">goodput falls past it</div></td>`,
		// VALID says what it means where it is shown: the header's title
		// and the notes under the table.
		`<th class="valid" title="yes when every level below the first failure held its load`,
		`<dt>valid</dt><dd>yes when every level below the first failure held its load`,
		// The chart's hover titles name levels as run's table does.
		`<title>1 connection: goodput 100/s</title>`,
		`<title>16 connections: p99 500ms</title>`,
		`<title>capacity 400/s at 4 connections: the highest goodput within the budgets</title>`,
		`idle, next in 59m`,
		`running, step 2 of 3`,
		`<td class="state">waiting: 127.0.0.1 is busy with canary (continuous)</td>`,
		`(version=1.2.3)`, `href="/metrics"`,
		// The run under way of a probe without a finished run is charted.
		`busy <span class="muted">· run under way`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if !regexp.MustCompile(`<tr id="row-fresh">(?s:.*?)no run yet(?s:.*?)</tr>`).MatchString(body) {
		t.Error(`the probe without a run does not say "no run yet"`)
	}
	if strings.Contains(body, "<b>bold</b>") || !strings.Contains(body, "&lt;b&gt;bold&lt;/b&gt;") {
		t.Error("a diagnosis line is not HTML-escaped")
	}

	svgs := regexp.MustCompile(`(?s)<svg class="ramp".*?</svg>`).FindAllString(body, -1)
	if len(svgs) != 2 {
		t.Fatalf("%d charts, want 2 (work's last run and busy's run under way)", len(svgs))
	}
	svg := parseSVG(t, svgs[0])
	good, lat := svg.find("polyline", "good"), svg.find("polyline", "lat")
	if len(good) != 1 || len(lat) != 1 {
		t.Fatalf("%d goodput and %d latency polylines, want one each", len(good), len(lat))
	}
	gp, lp := points(t, good[0].attr("points")), points(t, lat[0].attr("points"))
	if len(gp) != 5 || len(lp) != 5 {
		t.Fatalf("polylines of %d and %d points, want 5 (one per level)", len(gp), len(lp))
	}
	// Goodput rises to the knee: higher on screen is a smaller y.
	if !(gp[0][1] > gp[1][1] && gp[1][1] > gp[2][1]) {
		t.Errorf("goodput points %v do not rise from level 1 to 4", gp)
	}
	for i, class := range map[int]string{2: "knee", 3: "budget", 4: "failure"} {
		marks := svg.find("g", "mark "+class)
		if len(marks) != 1 {
			t.Errorf("%d %s marks, want 1", len(marks), class)
			continue
		}
		l := marks[0].find("line", "")
		if len(l) != 1 || num(t, l[0].attr("x1")) != gp[i][0] {
			t.Errorf("the %s mark is not at level %d's x (%g)", class, []int{1, 2, 4, 8, 16}[i], gp[i][0])
		}
	}
	if c := svg.find("circle", "capacity"); len(c) != 1 || num(t, c[0].attr("cx")) != gp[2][0] {
		t.Error("the capacity is not ringed at level 4")
	}
	if bl := svg.find("g", "budget-line"); len(bl) != 1 {
		t.Error("the 200ms budget is within the latency axis (p99 up to 500ms) but has no line")
	}
	if strings.Contains(svgs[0], "NaN") || strings.Contains(svgs[0], "Inf") {
		t.Errorf("the chart has non-numbers:\n%s", svgs[0])
	}

	if resp, _ := get(t, h, "/nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", resp.StatusCode)
	}
}

// A ramp whose goodput still rises at its last level reached no breaking
// point: each cell says so and how far the run looked, as run's table does,
// where a level would read as a knee the ramp found.
func TestStatusPageSaysNotReached(t *testing.T) {
	r := &result.Result{Name: "rising", Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Started: time.Now(), Valid: true}
	for _, lv := range []float64{1, 2, 4} {
		r.Steps = append(r.Steps, result.Step{Level: lv, Attempts: 100, Goodput: 100 * lv, Throughput: 100 * lv,
			Responses: result.Codes{result.HTTPStatus(200): 100}, Latency: result.Latency{P99: 0.01}})
	}
	p := probe("rising", 1, 2, 4)
	analysis.Analyze(r, p.Rules)
	states := []state.Probe{{Probe: p, Last: r}}
	_, body := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	testkit.Contains(t, "the page", body,
		`<td class="knee">not reached<div class="sub">up to 4 connections</div></td>`,
		`<td class="latency-budget">not reached<div class="sub">up to 4 connections</div></td>`,
		`<td class="first-failure">not reached<div class="sub">up to 4 connections</div></td>`,
		`<td class="capacity">4 connections<div class="sub">goodput 400/s</div></td>`,
		`>latency budget exceeded at</th>`,
		`<div class="sub">concurrency ramp</div>`, `last run, concurrency ramp,`,
	)
}

// markup is what a free-text string of the config or of a result could hold
// to break out of the page: a script, an attribute-closing quote with an
// event handler, and the end of the chart.
const markup = `</svg><script>document.body.dataset.pwned=1</script>"><img src=x onerror="document.body.dataset.pwned=2">`

// evilStates is a probe whose every string that reaches the page holds markup:
// its name (config allows [a-zA-Z0-9_-] only, but the page must not rely on
// it), its phase names, its error and its diagnosis.
func evilStates() []state.Probe {
	p := probe(markup)
	p.Load.Concurrency = nil
	p.Load.Phases = []plan.Phase{{Name: markup, Duration: model.Duration(time.Second), Rate: 1}, {Name: "b" + markup, Duration: model.Duration(time.Second), Rate: 2}}
	r := &result.Result{Name: markup, Mode: plan.ModePhases, Ended: result.ResultAborted, Started: time.Now(), Error: markup,
		Diagnosis: []string{markup, "second line " + markup},
		Steps:     []result.Step{{Level: 1, Name: markup, Goodput: 1}, {Level: 2, Name: "b" + markup, Goodput: 2}}}
	r.BreakingPoints.FirstFailure = &result.Point{Level: 2, Throughput: 2}
	return []state.Probe{{Probe: p, Last: r}}
}

// Whatever a name, a phase, an error or a diagnosis holds, it reaches the page
// as text.
func TestStatusPageEscapes(t *testing.T) {
	h := StatusHandler(markup, []Link{{Href: "/metrics", Text: markup}}, evilStates, notPaused)
	_, body := get(t, h, "/")
	checkEscaped(t, body)
	svg := regexp.MustCompile(`(?s)<svg class="ramp".*?</svg>`).FindString(body)
	parseSVG(t, svg) // well-formed despite the strings
}

// checkEscaped parses a page of evilStates as a browser does: it has no element
// the strings brought in, one whole chart, and the strings show whole in its
// text and attributes.
func checkEscaped(t *testing.T, page string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	elements := map[string]int{}
	var texts, attrs []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			elements[n.Data]++
			for _, a := range n.Attr {
				attrs = append(attrs, a.Val)
				if a.Key == "data-pwned" {
					t.Errorf("the injected script ran: <%s data-pwned=%q>", n.Data, a.Val)
				}
			}
		case html.TextNode:
			texts = append(texts, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, el := range []string{"script", "img"} {
		if elements[el] > 0 {
			t.Errorf("the page has %d <%s> elements: markup got through\n%s", elements[el], el, page)
		}
	}
	if elements["svg"] != 1 || elements["polyline"] != 2 {
		t.Errorf("%d charts with %d curves, want 1 chart with 2: the chart was cut short", elements["svg"], elements["polyline"])
	}
	// Where each string shows as text: the version, the link, the row, the
	// heading, two phase ticks, the error and two diagnosis lines, and the
	// circles' titles.
	if n := countContaining(texts, markup); n < 9 {
		t.Errorf("the markup shows whole in %d texts, want every place it reaches (version, link, row, heading, ticks, error, diagnosis)", n)
	}
	if n := countContaining(attrs, markup); n < 2 {
		t.Errorf("the markup shows whole in %d attribute values, want the row id and the chart's label at least", n)
	}
}

func countContaining(ss []string, sub string) int {
	n := 0
	for _, s := range ss {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{97.5, 100}, {100, 100}, {101, 200}, {349, 400}, {25, 25}, {0.0071, 0.008}, {0.0026, 0.003}, {0, 0.25}, {-1, 0.25},
	} {
		if got := niceStep(tc.in); got != tc.want {
			t.Errorf("niceStep(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

// node is an element of a parsed SVG.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// find returns the descendants named name whose class is class ("" for any).
func (n node) find(name, class string) []node {
	var out []node
	for _, c := range n.Children {
		if c.XMLName.Local == name && (class == "" || c.attr("class") == class) {
			out = append(out, c)
		}
		out = append(out, c.find(name, class)...)
	}
	return out
}

func parseSVG(t *testing.T, s string) node {
	t.Helper()
	var n node
	if err := xml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("the chart is not well-formed SVG: %v\n%s", err, s)
	}
	return n
}

func points(t *testing.T, s string) [][2]float64 {
	t.Helper()
	var ps [][2]float64
	for _, f := range strings.Fields(s) {
		x, y, _ := strings.Cut(f, ",")
		ps = append(ps, [2]float64{num(t, x), num(t, y)})
	}
	return ps
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// With telemetry, the knee's cell names the bottleneck and the capacity's
// the headroom over the live peak, on the page and in the report; the
// overload's grade says how soon the target recovered.
func TestTelemetryShowsBesideTheBreakingPoints(t *testing.T) {
	r := finished("work", time.Now().Add(-time.Minute))
	r.Bottleneck = &result.Bottleneck{Resource: "workers", Level: 4, Value: 1}
	r.Headroom = &result.Headroom{Ratio: 4.05, Capacity: 405, LivePeak: 100, LiveNow: 60, Window: "7d"}
	recovered := 3.02
	r.Overload = &result.Overload{Grade: result.OverloadGraceful, GoodputRetained: 1, RecoverySeconds: &recovered}
	states := []state.Probe{{Probe: probe("work", 1, 2, 4, 8, 16), Last: r}}
	_, page := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	testkit.Contains(t, "the status page", page,
		`<div class="sub overload graceful">overload graceful, recovered in 3.02s</div>`,
		`<div class="sub bottleneck">bottleneck: workers</div>`,
		`<div class="sub headroom">headroom 4.05× its live peak (100/s)</div>`)
	states[0].Last = finished("work", time.Now().Add(-time.Minute))
	_, page = get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	testkit.Lacks(t, "a page without telemetry", page, `class="sub bottleneck"`, `class="sub headroom"`)
	var b strings.Builder
	if err := Report(&b, "v", []Run{{Probe: probe("work", 1, 2, 4, 8, 16), Result: *r}}); err != nil {
		t.Fatal(err)
	}
	testkit.Contains(t, "the report", b.String(), "bottleneck: workers", "headroom 4.05× its live peak (100/s)")
}

// A run that compared a candidate draws the candidate's goodput on its
// chart, at the baseline's levels, with its legend.
func TestChartDrawsTheCandidate(t *testing.T) {
	r := finished("work", time.Now().Add(-time.Minute))
	cand := finished("work", time.Now().Add(-time.Minute))
	for i := range cand.Steps {
		cand.Steps[i].Goodput *= 0.9
	}
	r.Compare = &result.Compare{Verdict: result.VerdictFail, CapacityRatio: 0.9, Interval: [2]float64{0.88, 0.92}, Candidate: cand}
	states := []state.Probe{{Probe: probe("work", 1, 2, 4, 8, 16), Last: r}}
	_, page := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	svg := parseSVG(t, regexp.MustCompile(`(?s)<svg class="ramp".*?</svg>`).FindString(page))
	good, candidate := svg.find("circle", "good"), svg.find("circle", "candidate")
	if len(candidate) != len(good) || len(candidate) != 5 || len(svg.find("polyline", "candidate")) != 1 {
		t.Fatalf("%d candidate dots and %d of the baseline's, want 5 each and the candidate's line", len(candidate), len(good))
	}
	for i := range good {
		if candidate[i].attr("cx") != good[i].attr("cx") || !(num(t, candidate[i].attr("cy")) > num(t, good[i].attr("cy"))) {
			t.Errorf("level %d: candidate at (%s, %s), baseline at (%s, %s): want the same level, lower goodput",
				i, candidate[i].attr("cx"), candidate[i].attr("cy"), good[i].attr("cx"), good[i].attr("cy"))
		}
	}
	testkit.Contains(t, "the chart's legend", page, `<span class="candidate">candidate's goodput</span>`)
}
