package dashboards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Expr is one PromQL expression shipped in this package.
type Expr struct {
	// File is the file it came from, relative to the module root ("dashboards/rules.yml").
	File string
	// Source says where in the file: "panel TITLE / REFID", "variable NAME",
	// "record NAME" or "alert NAME".
	Source string
	// Kind is "panel", "variable", "record" or "alert".
	Kind string
	// Expr is the expression as written. Dashboard expressions hold Grafana template
	// variables; pass them through SubstituteTemplateVars before sending them to
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

// Dashboards and rule files, in the order Expressions reports them.
var (
	dashboardFiles = []string{"loadprobe-overview.json", "loadprobe-probe.json"}
	ruleFiles      = []string{"rules.yml", "alerts.yml"}
)

// mayBeEmpty lists the expressions that may return nothing after one completed
// concurrency ramp, keyed by "FILE|SOURCE". Every alert expression may be empty too.
// The package test fails on an entry that no longer names an expression.
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
	"rules.yml|record probe:loadprobe_load:steady15m":                                              "a ramp is not a steady load; only probes that held one load level in the window (continuous canaries) have this series",
}

const alertWhy = "an alert expression is empty while its alert is neither pending nor firing"

// Expressions returns every PromQL expression in both dashboards (every target of every
// panel, rows included, and every query variable) and both rule files, in file order.
func Expressions() ([]Expr, error) {
	var out []Expr
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

// Just what Expressions reads from a dashboard.
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

func dashboardExprs(name string) ([]Expr, error) {
	raw, err := Files.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var d dashboardJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("dashboards/%s: %w", name, err)
	}
	file := "dashboards/" + name
	var out []Expr
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
		out = append(out, Expr{File: file, Source: "variable " + v.Name, Kind: "variable", Expr: strings.TrimSpace(m[1]), Instant: true})
	}
	var walk func([]panelJSON)
	walk = func(ps []panelJSON) {
		for _, p := range ps {
			walk(p.Panels)
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					continue
				}
				out = append(out, Expr{File: file, Source: "panel " + p.Title + " / " + t.RefID, Kind: "panel",
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

// Just what Expressions reads from a rule file.
type ruleFileYAML struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func parseRuleFile(name string) (ruleFileYAML, error) {
	var rf ruleFileYAML
	raw, err := Files.ReadFile(name)
	if err != nil {
		return rf, err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		return rf, fmt.Errorf("dashboards/%s: %w", name, err)
	}
	return rf, nil
}

func ruleExprs(name string) ([]Expr, error) {
	rf, err := parseRuleFile(name)
	if err != nil {
		return nil, err
	}
	var out []Expr
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			e := Expr{File: "dashboards/" + name, Expr: strings.TrimSpace(r.Expr), Instant: true}
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

// SubstituteTemplateVars replaces Grafana template variables in a dashboard expression
// with concrete values: $name, ${name} (also ${name:format}) and [[name]], for names such
// as job, instance, probe, __rate_interval, __interval and __range. vars is keyed by the
// name with or without its "$". Multi-value variables are matched with =~ in these
// dashboards, so pass a regular expression (".*" for All). Variables not in vars are
// left as they are; a longer name is never cut short ($__range_s is not $__range + "_s").
func SubstituteTemplateVars(expr string, vars map[string]string) string {
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

// Windows are the replacement durations for ShortenWindows, in Prometheus duration
// syntax ("2m", "30s"); an empty field leaves that window as it is.
type Windows struct {
	Baseline string // "[7d]": the quantile_over_time baselines
	Steady   string // "[15m]": what counts as a steady (continuous) load
	Rate     string // "[5m]": live rates and ratios
	For      string // every alert's "for:"
}

var forRE = regexp.MustCompile(`(?m)^(\s*for:\s*)[0-9][0-9a-z]*\s*$`)

// ShortenWindows applies the substitution contract documented at the top of rules.yml
// and alerts.yml to the text of either file, so an integration test can load a copy
// whose alerts fire within minutes. Rule names keep their suffixes (..._7d), so the
// dashboards keep working against the copy.
func ShortenWindows(ruleFile string, w Windows) string {
	for _, r := range []struct{ token, with string }{{"[7d]", w.Baseline}, {"[15m]", w.Steady}, {"[5m]", w.Rate}} {
		if r.with != "" {
			ruleFile = strings.ReplaceAll(ruleFile, r.token, "["+r.with+"]")
		}
	}
	if w.For != "" {
		ruleFile = forRE.ReplaceAllString(ruleFile, "${1}"+w.For)
	}
	return ruleFile
}
