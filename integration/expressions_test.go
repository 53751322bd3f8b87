package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/internal/realpart"
)

// The dashboards and rule files are the product; this file finds every PromQL
// expression in them, so that the real Prometheus of the integration test parses
// and evaluates each one. Prometheus is the judge of PromQL: nothing here parses it.

// dashboardsDir holds the files, relative to this package.
const dashboardsDir = "../dashboards"

// expr is one PromQL expression of dashboards/.
type expr struct {
	// File is the file it came from, relative to the module root ("dashboards/rules.yml").
	File string
	// Source says where in the file: "panel TITLE / REFID", "variable NAME",
	// "record NAME" or "alert NAME".
	Source string
	// Kind is "panel", "variable", "record" or "alert".
	Kind string
	// Expr is the expression as written. Dashboard expressions hold Grafana template
	// variables; pass them through substituteTemplateVars before sending them to
	// Prometheus. A variable's label_values(SELECTOR, LABEL) is given as SELECTOR.
	Expr string
	// Instant is true for dashboard targets that run as instant queries (tables, stats,
	// the ramp curve); the others are range queries. Rule expressions are instant.
	Instant bool
	// ExpectData is true when the expression must return at least one series right
	// after one completed concurrency ramp (the rule files loaded, one scrape after the
	// run's end inside every rate window). When false, Why says why it may be empty.
	ExpectData bool
	Why        string
}

// Dashboards and rule files, in the order expressions reports them.
var (
	dashboardFiles = []string{"loadprobe-overview.json", "loadprobe-probe.json"}
	ruleFiles      = []string{"rules.yml", "alerts.yml"}
)

// mayBeEmpty lists the expressions that may return nothing after one completed
// concurrency ramp, keyed by "FILE|SOURCE". Every alert expression may be empty too.
// TestExpressions fails on an entry that no longer names an expression.
//
// Not listed, because the daemon creates them at 0 for every configured probe when
// it loads the config (so that rate() and increase() work from the first run on):
// loadprobe_requests_total for every outcome, loadprobe_runs_total for every
// result, loadprobe_offered_rate, loadprobe_concurrency, loadprobe_in_flight_requests
// and loadprobe_dropped_requests_total. The panels over them show 0, not "No data",
// for a closed-loop or healthy probe; the integration test holds them to it.
var mayBeEmpty = map[string]string{
	"loadprobe-overview.json|panel Probes at a glance / D":                                         "the latency budget may never be exceeded (no latency_budget breaking point)",
	"loadprobe-overview.json|panel Probes at a glance / E":                                         "no level may have failed (no first_failure breaking point)",
	"loadprobe-overview.json|panel Capacity against its 7-day median and the expected minimum / C": "only probes with expect.min_capacity export loadprobe_expected_min_capacity",
	"loadprobe-overview.json|panel Latency-budget level / A":                                       "the latency budget may never be exceeded (no latency_budget breaking point)",
	"loadprobe-overview.json|panel Latency-budget level / B":                                       "no latency_budget breaking point, so no baseline of it",
	"loadprobe-overview.json|panel First-failure level / A":                                        "no level may have failed (no first_failure breaking point)",
	"loadprobe-probe.json|panel Shedding, limiting, timeouts and refusals / A":                     "no 503 answers in a healthy ramp",
	"loadprobe-probe.json|panel Shedding, limiting, timeouts and refusals / B":                     "no 429 answers in a healthy ramp",
	"loadprobe-probe.json|panel Open loop: send delay / A":                                         "loadprobe_send_delay_seconds is observed by open-loop probes only",
	"loadprobe-probe.json|panel Open loop: send delay / B":                                         "loadprobe_send_delay_seconds is observed by open-loop probes only",
	"loadprobe-probe.json|panel WebSocket handshakes per second by outcome / A":                    "only WebSocket probes count handshakes",
	"loadprobe-probe.json|panel Guards: last value and breaches / A":                               "only probes with guards evaluate them; the panels are evaluated for work, which has none",
	"loadprobe-probe.json|panel Guards: last value and breaches / B":                               "only probes with guards evaluate them; the panels are evaluated for work, which has none",
	"loadprobe-probe.json|panel WebSocket handshake duration / A":                                  "only WebSocket probes time handshakes",
	"loadprobe-probe.json|panel WebSocket handshake duration / B":                                  "only WebSocket probes time handshakes",
	"loadprobe-probe.json|panel WebSocket sessions closed by the server, by close code / A":        "only WebSocket probes whose server closed a session count close codes",
	"loadprobe-probe.json|panel Flow steps: attempts and failures per second by step / A":          noStep,
	"loadprobe-probe.json|panel Flow steps: attempts and failures per second by step / B":          noStep,
	"loadprobe-probe.json|panel Flow steps: p50 and p99 latency by step / A":                       noStep,
	"loadprobe-probe.json|panel Flow steps: p50 and p99 latency by step / B":                       noStep,
	"loadprobe-probe.json|panel Flow steps: responses per second by step and status code / A":      noStep,
	"loadprobe-overview.json|panel Fleet results / C":                                              "the fleet's latency budget may never be exceeded (no latency_budget breaking point)",
	"loadprobe-overview.json|panel Fleet results / D":                                              "no level of the fleet may have failed (no first_failure breaking point)",
	"rules.yml|record probe:loadprobe_load:steady15m":                                              "a ramp is not a steady load; only continuous probes (loadprobe_probe_info{continuous=\"true\"}) that applied load in the window have this series",
	"rules.yml|record probe:loadprobe_valid_run_completed:timestamp":                               "present only while the last run is valid and a run has completed; a generator-limited run on a busy machine is not valid",
	"rules.yml|record probe:loadprobe_valid_runs:count7d":                                          "counts the completed valid runs: none while no valid run has completed",
	"loadprobe-probe.json|panel Contention σ over time / A":                                        noFit,
	"loadprobe-probe.json|panel Contention σ over time / B":                                        noFit,
	"loadprobe-probe.json|panel Coherency κ over time / A":                                         noFit,
	"loadprobe-probe.json|panel Coherency κ over time / B":                                         noFit,
	"loadprobe-probe.json|panel Predicted peak N* over time / A":                                   noFit,
	"loadprobe-probe.json|panel Predicted peak N* over time / B":                                   noFit,
	"rules.yml|record probe:loadprobe_model_contention:median_7d":                                  noFit,
	"rules.yml|record probe:loadprobe_model_coherency:median_7d":                                   noFit,
	"rules.yml|record probe:loadprobe_model_peak_level:median_7d":                                  noFit,
	"rules.yml|record probe:loadprobe_model_peak_throughput:median_7d":                             noFit,
	"rules.yml|record probe:loadprobe_model_fitted_run:timestamp_seconds":                          noFit,
	"rules.yml|record probe:loadprobe_model_fitted_runs:count_7d":                                  noFit,
}

// noFit: the model gauges exist only for a run whose levels gave a fit
// (docs/model.md, "Verdicts"), and κ and N* only when κ could be told
// from 0; a short or plateaued ramp may give a verdict instead.
const noFit = "a run exports the loadprobe_model_* gauges only when its ramp gave a USL fit"

// noStep: the step label is set only by a flow's steps, and a flow's steps
// get their series on its first run, not when the config loads.
const noStep = "only flow probes' requests carry a step label (step=\"\" for a single request)"

const alertWhy = "an alert expression is empty while its alert is neither pending nor firing"

// expressions returns every PromQL expression in both dashboards (every target of every
// panel, rows included, and every query variable) and both rule files, in file order.
func expressions() ([]expr, error) {
	var out []expr
	for _, f := range dashboardFiles {
		es, err := dashboardExprs(f)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	for _, f := range ruleFiles {
		es, err := ruleExprs(f)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	for i := range out {
		e := &out[i]
		why, ok := mayBeEmpty[strings.TrimPrefix(e.File, "dashboards/")+"|"+e.Source]
		switch {
		case e.Kind == "alert":
			e.Why = alertWhy
		case ok:
			e.Why = why
		default:
			e.ExpectData = true
		}
	}
	return out, nil
}

// Just what expressions reads from a dashboard.
type dashboardJSON struct {
	Panels     []panelJSON `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panelJSON struct {
	Title   string      `json:"title"`
	Type    string      `json:"type"`
	Panels  []panelJSON `json:"panels"` // a row's panels (collapsed rows keep them here)
	Targets []struct {
		RefID   string `json:"refId"`
		Expr    string `json:"expr"`
		Instant bool   `json:"instant"`
		Range   bool   `json:"range"`
	} `json:"targets"`
}

var labelValuesRE = regexp.MustCompile(`(?s)^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

func dashboardExprs(name string) ([]expr, error) {
	raw, err := os.ReadFile(filepath.Join(dashboardsDir, name))
	if err != nil {
		return nil, err
	}
	var d dashboardJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("dashboards/%s: %w", name, err)
	}
	file := "dashboards/" + name
	var out []expr
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := variableQuery(v.Query)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %s: %w", file, v.Name, err)
		}
		m := labelValuesRE.FindStringSubmatch(q)
		if m == nil {
			return nil, fmt.Errorf("%s: variable %s: want label_values(SELECTOR, LABEL), got %q", file, v.Name, q)
		}
		out = append(out, expr{File: file, Source: "variable " + v.Name, Kind: "variable", Expr: strings.TrimSpace(m[1]), Instant: true})
	}
	var walk func([]panelJSON)
	walk = func(ps []panelJSON) {
		for _, p := range ps {
			walk(p.Panels)
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					continue
				}
				out = append(out, expr{File: file, Source: "panel " + p.Title + " / " + t.RefID, Kind: "panel",
					Expr: t.Expr, Instant: t.Instant && !t.Range})
			}
		}
	}
	walk(d.Panels)
	return out, nil
}

// variableQuery accepts both forms Grafana writes: a string, or {"query": "..."}.
func variableQuery(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var o struct {
		Query string `json:"query"`
	}
	err := json.Unmarshal(raw, &o)
	return o.Query, err
}

func ruleExprs(name string) ([]expr, error) {
	raw, err := os.ReadFile(filepath.Join(dashboardsDir, name))
	if err != nil {
		return nil, err
	}
	var rf struct {
		Groups []struct {
			Rules []struct {
				Record, Alert, Expr string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &rf); err != nil {
		return nil, fmt.Errorf("dashboards/%s: %w", name, err)
	}
	var out []expr
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			e := expr{File: "dashboards/" + name, Expr: strings.TrimSpace(r.Expr), Instant: true}
			if r.Alert != "" {
				e.Kind, e.Source = "alert", "alert "+r.Alert
			} else {
				e.Kind, e.Source = "record", "record "+r.Record
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// substituteTemplateVars replaces Grafana template variables in a dashboard expression
// with concrete values: $name, ${name} (also ${name:format}) and [[name]], for names such
// as job, instance, probe, __rate_interval, __interval and __range. vars is keyed by the
// name with or without its "$". Multi-value variables are matched with =~ in these
// dashboards, so pass a regular expression (".*" for All). Variables not in vars are
// left as they are; a longer name is never cut short ($__range_s is not $__range + "_s").
func substituteTemplateVars(expr string, vars map[string]string) string {
	lookup := func(name string) (string, bool) {
		if v, ok := vars[name]; ok {
			return v, true
		}
		v, ok := vars["$"+name]
		return v, ok
	}
	var b strings.Builder
	for i := 0; i < len(expr); {
		switch {
		case strings.HasPrefix(expr[i:], "${"):
			if end := strings.IndexByte(expr[i:], '}'); end > 0 {
				name, _, _ := strings.Cut(expr[i+2:i+end], ":")
				if v, ok := lookup(name); ok {
					b.WriteString(v)
					i += end + 1
					continue
				}
			}
		case expr[i] == '$':
			j := i + 1
			for j < len(expr) && (expr[j] == '_' || expr[j] >= 'a' && expr[j] <= 'z' || expr[j] >= 'A' && expr[j] <= 'Z' || expr[j] >= '0' && expr[j] <= '9') {
				j++
			}
			if v, ok := lookup(expr[i+1 : j]); ok && j > i+1 {
				b.WriteString(v)
				i = j
				continue
			}
		case strings.HasPrefix(expr[i:], "[["):
			if end := strings.Index(expr[i:], "]]"); end > 0 {
				if v, ok := lookup(expr[i+2 : i+end]); ok {
					b.WriteString(v)
					i += end + 2
					continue
				}
			}
		}
		b.WriteByte(expr[i])
		i++
	}
	return b.String()
}

// windows are the replacement durations for shortenWindows, in Prometheus duration
// syntax ("2m", "30s"); an empty field leaves that window as it is.
type windows struct {
	Baseline string // "[7d]": the quantile_over_time baselines
	Steady   string // "[15m]": what counts as a steady (continuous) load
	Rate     string // "[5m]": live rates and ratios
	Runs     string // "[6h]": the window a probe's runs count as in a row
	Trend    string // "[14d]": the live peak's trend
	For      string // every alert's "for:"
	MinRuns  string // "5": the completed valid runs a baseline alert waits for
}

var forRE = regexp.MustCompile(`(?m)^(\s*for:\s*)[0-9][0-9a-z]*\s*$`)

// shortenWindows applies the substitution contract documented at the top of rules.yml
// and alerts.yml to the text of either file, so that the test can load a copy
// whose alerts fire within minutes. Rule names keep their suffixes (..._7d), so the
// dashboards keep working against the copy.
func shortenWindows(ruleFile string, w windows) string {
	for _, r := range []struct{ token, with string }{{"[7d]", w.Baseline}, {"[15m]", w.Steady}, {"[5m]", w.Rate}, {"[6h]", w.Runs}, {"[14d]", w.Trend}} {
		if r.with != "" {
			ruleFile = strings.ReplaceAll(ruleFile, r.token, "["+r.with+"]")
		}
	}
	if w.For != "" {
		ruleFile = forRE.ReplaceAllString(ruleFile, "${1}"+w.For)
	}
	if w.MinRuns != "" {
		ruleFile = strings.ReplaceAll(ruleFile, "count7d >= 5", "count7d >= "+w.MinRuns)
	}
	return ruleFile
}

var (
	quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	// Every series loadprobe exports, and every recording rule over them, has
	// loadprobe_ in its name; no label name or function does.
	loadprobeNameRE = regexp.MustCompile(`\b(?:[a-z_]+:)?loadprobe_[a-z0-9_]*(?::[a-z0-9_]+)*`)
)

// loadprobeNames returns the loadprobe series and recording rules an expression
// names (quoted strings aside), sorted, without duplicates.
func loadprobeNames(e string) []string {
	names := loadprobeNameRE.FindAllString(quotedRE.ReplaceAllString(e, `""`), -1)
	sort.Strings(names)
	return slices.Compact(names)
}

// Every dashboard target and rule is found, each once, and the list of optional
// expressions names no expression that is gone.
func TestExpressions(t *testing.T) {
	exprs, err := expressions()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	seen := map[string]bool{}
	for _, e := range exprs {
		count[e.File+" "+e.Kind]++
		key := strings.TrimPrefix(e.File, "dashboards/") + "|" + e.Source
		if seen[key] {
			t.Errorf("two expressions at %s", key)
		}
		seen[key] = true
		if strings.TrimSpace(e.Expr) == "" {
			t.Errorf("%s: empty", key)
		}
	}
	for key := range mayBeEmpty {
		if !seen[key] {
			t.Errorf("mayBeEmpty names %q, which is no longer an expression", key)
		}
	}
	for _, want := range []string{
		"dashboards/loadprobe-overview.json panel", "dashboards/loadprobe-overview.json variable",
		"dashboards/loadprobe-probe.json panel", "dashboards/loadprobe-probe.json variable",
		"dashboards/rules.yml record", "dashboards/alerts.yml alert",
	} {
		if count[want] == 0 {
			t.Errorf("no %s expressions", want)
		}
	}
	// Every target is reported: compare with a count of "expr" keys straight from the text.
	for _, f := range dashboardFiles {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if got, n := count["dashboards/"+f+" panel"], strings.Count(string(raw), `"expr":`); got != n {
			t.Errorf("%s: expressions reports %d panel queries, the file has %d", f, got, n)
		}
	}
	for _, f := range ruleFiles {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		n := len(regexp.MustCompile(`(?m)^\s*- (record|alert):`).FindAllIndex(raw, -1))
		if got := count["dashboards/"+f+" record"] + count["dashboards/"+f+" alert"]; got != n {
			t.Errorf("%s: expressions reports %d rules, the file has %d", f, got, n)
		}
	}
	t.Logf("%v", count)
}

func TestLoadprobeNames(t *testing.T) {
	for e, want := range map[string][]string{
		`histogram_quantile(0.99, sum by (le) (rate(loadprobe_a_bucket{x="loadprobe_no"}[5m]))) or histogram_quantile(0.99, sum(rate(loadprobe_a[5m])))`: {"loadprobe_a", "loadprobe_a_bucket"},
		`loadprobe_b{rule="knee"} < on (job, instance, probe, rule) 0.8 * probe:loadprobe_c:median_7d unless up`:                                         {"loadprobe_b", "probe:loadprobe_c:median_7d"},
		`{__name__="loadprobe_quoted"} and label_replace(up, "a", "$1", "b", "(.*)")`:                                                                    nil,
	} {
		if got := loadprobeNames(e); !slices.Equal(got, want) {
			t.Errorf("loadprobeNames(%s) = %v, want %v", e, got, want)
		}
	}
}

func TestSubstituteTemplateVars(t *testing.T) {
	vars := map[string]string{"job": "loadprobe", "$instance": ".*", "probe": "work", "__rate_interval": "1m", "__range": "1h"}
	for in, want := range map[string]string{
		`rate(x{job=~"$job", instance=~"$instance", probe=~"$probe"}[$__rate_interval])`: `rate(x{job=~"loadprobe", instance=~".*", probe=~"work"}[1m])`,
		`x{job=~"${job}", probe=~"${probe:regex}"}[[probe]]`:                             `x{job=~"loadprobe", probe=~"work"}work`,
		`$__range_s $__range $jobs $__interval`:                                          `$__range_s 1h $jobs $__interval`,
		`no vars; $ alone; price $5`:                                                     `no vars; $ alone; price $5`,
	} {
		if got := substituteTemplateVars(in, vars); got != want {
			t.Errorf("substituteTemplateVars(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// The short-window copy replaces every window and every for:, keeps the rule
// names, and is still valid rules for promtool.
func TestShortenWindows(t *testing.T) {
	dir := t.TempDir()
	for _, file := range ruleFiles {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, file))
		if err != nil {
			t.Fatal(err)
		}
		short := shortenWindows(string(raw), windows{Baseline: "2m", Steady: "1m", Rate: "30s", Runs: "1m", Trend: "10m", For: "0s"})
		var rules strings.Builder
		for _, line := range strings.Split(short, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				rules.WriteString(line + "\n")
			}
		}
		for _, token := range []string{"[7d]", "[15m]", "[5m]", "[6h]", "[14d]"} {
			if strings.Contains(rules.String(), token) {
				t.Errorf("%s: %s survived shortenWindows", file, token)
			}
		}
		if m := regexp.MustCompile(`(?m)^\s*for:\s*(\S+)`).FindAllStringSubmatch(short, -1); file == "alerts.yml" {
			if len(m) == 0 {
				t.Errorf("%s: no for: lines", file)
			}
			for _, f := range m {
				if f[1] != "0s" {
					t.Errorf("%s: for: %s survived shortenWindows", file, f[1])
				}
			}
		}
		if strings.Contains(short, "median_2m") || !strings.Contains(short, "median_7d") {
			t.Errorf("%s: shortenWindows must keep rule names", file)
		}
		writeFile(t, filepath.Join(dir, file), short)
	}
	cmd := exec.Command(realpart.Find(t, "promtool", "apt-get install --no-install-recommends prometheus"), "check", "rules", "rules.yml", "alerts.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules on the short-window copy: %v\n%s", err, out)
	}
}
