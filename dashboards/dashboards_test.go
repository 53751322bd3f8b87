package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/internal/realpart"
)

// families are the metric families docs/metrics.md names, with their labels beyond the
// job/instance target labels. Keep in step with docs/metrics.md.
var families = map[string][]string{
	// live, per request
	"loadprobe_requests_total":         {"probe", "outcome", "step"},
	"loadprobe_responses_total":        {"probe", "code", "step"},
	"loadprobe_in_flight_requests":     {"probe"},
	"loadprobe_concurrency":            {"probe"},
	"loadprobe_offered_rate":           {"probe"},
	"loadprobe_dropped_requests_total": {"probe"},
	// live, WebSocket probes only
	"loadprobe_websocket_handshakes_total":  {"probe", "outcome"},
	"loadprobe_websocket_close_codes_total": {"probe", "code"},
	// per step
	"loadprobe_step_throughput":           {"probe", "level"},
	"loadprobe_step_goodput":              {"probe", "level"},
	"loadprobe_step_latency_seconds":      {"probe", "level", "quantile"},
	"loadprobe_step_latency_mean_seconds": {"probe", "level"},
	"loadprobe_step_error_ratio":          {"probe", "level"},
	"loadprobe_step_in_flight":            {"probe", "level"},
	"loadprobe_step_load_held_ratio":      {"probe", "level"},
	"loadprobe_step_responses":            {"probe", "level", "code"},
	"loadprobe_step_errors":               {"probe", "level", "reason"},
	"loadprobe_step_generator_cpu_ratio":  {"probe", "level"},
	"loadprobe_step_saturation":           {"probe", "level", "resource"},
	// per run
	"loadprobe_breaking_point_level":                 {"probe", "rule"},
	"loadprobe_breaking_point_throughput":            {"probe", "rule"},
	"loadprobe_breaking_point_lower_level":           {"probe", "rule"},
	"loadprobe_probe_info":                           {"probe", "mode", "continuous"},
	"loadprobe_peak_throughput":                      {"probe"},
	"loadprobe_capacity_level":                       {"probe"},
	"loadprobe_capacity_throughput":                  {"probe"},
	"loadprobe_overload_goodput_retained":            {"probe"},
	"loadprobe_recovery_seconds":                     {"probe"},
	"loadprobe_capacity_change_ratio":                {"probe"},
	"loadprobe_capacity_change_runs_ago":             {"probe"},
	"loadprobe_compare_capacity_ratio":               {"probe"},
	"loadprobe_compare_capacity_ratio_lower":         {"probe"},
	"loadprobe_compare_capacity_ratio_upper":         {"probe"},
	"loadprobe_compare_verdict":                      {"probe", "verdict"},
	"loadprobe_bottleneck_level":                     {"probe", "resource"},
	"loadprobe_headroom_ratio":                       {"probe"},
	"loadprobe_live_peak_throughput":                 {"probe"},
	"loadprobe_live_throughput":                      {"probe"},
	"loadprobe_expected_min_capacity":                {"probe"},
	"loadprobe_run_valid":                            {"probe"},
	"loadprobe_run_last_completed_timestamp_seconds": {"probe"},
	"loadprobe_run_duration_seconds":                 {"probe"},
	"loadprobe_runs_total":                           {"probe", "result"},
	"loadprobe_running":                              {"probe"},
	"loadprobe_schedule_interval_seconds":            {"probe"},
	"loadprobe_model_contention":                     {"probe"},
	"loadprobe_model_coherency":                      {"probe"},
	"loadprobe_model_single_throughput":              {"probe"},
	"loadprobe_model_peak_level":                     {"probe"},
	"loadprobe_model_peak_throughput":                {"probe"},
	"loadprobe_model_fit_error_ratio":                {"probe"},
	// fleet (docs/metrics.md, "Fleet"; the fleet_ families on replica 0 only)
	"loadprobe_shard_info":                      {"shard", "shards", "config_hash"},
	"loadprobe_step_started_timestamp_seconds":  {"probe", "level"},
	"loadprobe_step_share":                      {"probe", "level"},
	"loadprobe_fleet_breaking_point_level":      {"probe", "rule"},
	"loadprobe_fleet_breaking_point_throughput": {"probe", "rule"},
	"loadprobe_fleet_peak_throughput":           {"probe"},
	"loadprobe_fleet_capacity_level":            {"probe"},
	"loadprobe_fleet_capacity_throughput":       {"probe"},
	"loadprobe_fleet_run_valid":                 {"probe"},
	"loadprobe_fleet_replicas":                  {"probe"},
	"loadprobe_fleet_shard_complete":            {"probe", "shard"},
	"loadprobe_fleet_step_start_skew_seconds":   {"probe"},
	// guards
	"loadprobe_guard_value":          {"probe", "guard"},
	"loadprobe_guard_breaches_total": {"probe", "guard"},
	"loadprobe_guard_errors_total":   {"probe", "guard"},
	// process
	"loadprobe_build_info":                                   {"version", "revision", "branch", "goversion", "goos", "goarch", "tags"},
	"loadprobe_config_last_reload_successful":                {},
	"loadprobe_storage_save_failures_total":                  {},
	"loadprobe_paused":                                       {},
	"loadprobe_config_last_reload_success_timestamp_seconds": {},
	"process_start_time_seconds":                             {},
	// added by Prometheus
	"up": {},
}

// histograms are exported in classic and native form: name_bucket/_sum/_count, or name.
var histograms = map[string][]string{
	"loadprobe_request_duration_seconds":             {"probe", "outcome", "step"},
	"loadprobe_send_delay_seconds":                   {"probe"},
	"loadprobe_websocket_handshake_duration_seconds": {"probe"},
}

// knownMetrics returns every selectable name with its labels (beyond job and instance):
// the families, both forms of the histograms, and the recording rules of rules.yml
// (their level, e.g. probe_rule, names their labels).
func knownMetrics(t *testing.T) map[string][]string {
	t.Helper()
	known := map[string][]string{}
	for n, l := range families {
		known[n] = l
	}
	for n, l := range histograms {
		known[n] = l
		known[n+"_bucket"] = append(slices.Clone(l), "le")
		known[n+"_sum"] = l
		known[n+"_count"] = l
	}
	rf, err := parseRuleFile("rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = strings.Split(strings.SplitN(r.Record, ":", 2)[0], "_")
			}
		}
	}
	return known
}

// The rule files, as promtool and Prometheus load them.
var ruleFiles = []string{"rules.yml", "alerts.yml"}

// Just what the tests read from a rule file.
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

// parseRuleFile reads a rule file strictly: a misspelt key is an error here
// before it is one in Prometheus.
func parseRuleFile(name string) (ruleFileYAML, error) {
	var rf ruleFileYAML
	raw, err := os.ReadFile(name)
	if err != nil {
		return rf, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		return rf, fmt.Errorf("dashboards/%s: %w", name, err)
	}
	return rf, nil
}

var labelValuesRE = regexp.MustCompile(`(?s)^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

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

type dashboardSpec struct {
	file, uid  string
	probeMulti bool
}

var dashboards = []dashboardSpec{
	{"loadprobe-overview.json", "loadprobe-overview", true},
	{"loadprobe-probe.json", "loadprobe-probe", false},
}

func readJSON(t *testing.T, file string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return d
}

func str(v any) string { s, _ := v.(string); return s }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func list(v any) []any { l, _ := v.([]any); return l }

// datasourceIsVariable accepts {"type":"prometheus","uid":"${datasource}"} and the older
// plain string "${datasource}".
func datasourceIsVariable(v any) bool {
	if s, ok := v.(string); ok {
		return s == "${datasource}" || s == "$datasource"
	}
	m := obj(v)
	return m != nil && (str(m["uid"]) == "${datasource}" || str(m["uid"]) == "$datasource")
}

func TestDashboardConventions(t *testing.T) {
	known := knownMetrics(t)
	for _, spec := range dashboards {
		t.Run(spec.file, func(t *testing.T) {
			d := readJSON(t, spec.file)
			if got := str(d["uid"]); got != spec.uid {
				t.Errorf("uid = %q, want the fixed %q", got, spec.uid)
			}
			if v, _ := d["schemaVersion"].(float64); v < 36 {
				t.Errorf("schemaVersion = %v, want >= 36", d["schemaVersion"])
			}
			if str(d["title"]) == "" || str(d["description"]) == "" {
				t.Error("dashboard needs a title and a description")
			}
			if !slices.Contains(list(d["tags"]), any("loadprobe")) {
				t.Error(`dashboard is not tagged "loadprobe" (the dashboard links use the tag)`)
			}
			checkVariables(t, obj(d["templating"]), spec, known)

			ids := map[float64]string{}
			n := 0
			for _, p := range allPanels(list(d["panels"])) {
				title := str(p["title"])
				id, _ := p["id"].(float64)
				if other, dup := ids[id]; dup {
					t.Errorf("panels %q and %q share id %v", other, title, id)
				}
				ids[id] = title
				gp := obj(p["gridPos"])
				if x, w := gp["x"].(float64), gp["w"].(float64); w <= 0 || x+w > 24 {
					t.Errorf("panel %q: gridPos %v outside the 24-column grid", title, gp)
				}
				if str(p["type"]) == "row" {
					continue
				}
				n++
				checkPanel(t, p, known)
			}
			if n == 0 {
				t.Fatal("no panels")
			}
		})
	}
}

// allPanels returns the panels in order, with the panels nested in rows after their row.
func allPanels(ps []any) []map[string]any {
	var out []map[string]any
	for _, p := range ps {
		m := obj(p)
		out = append(out, m)
		out = append(out, allPanels(list(m["panels"]))...)
	}
	return out
}

func checkVariables(t *testing.T, templating map[string]any, spec dashboardSpec, known map[string][]string) {
	t.Helper()
	vars := map[string]map[string]any{}
	var order []string
	for _, v := range list(templating["list"]) {
		m := obj(v)
		vars[str(m["name"])] = m
		order = append(order, str(m["name"]))
	}
	if want := []string{"datasource", "job", "instance", "probe"}; !slices.Equal(order, want) {
		t.Errorf("template variables %v, want %v in this order (each refines the next)", order, want)
	}
	ds := vars["datasource"]
	if str(ds["type"]) != "datasource" || str(ds["query"]) != "prometheus" {
		t.Errorf(`variable datasource: type %q query %q, want type "datasource" query "prometheus"`, ds["type"], ds["query"])
	}
	// Each variable must depend on the ones before it.
	needs := map[string][]string{"job": nil, "instance": {`job=~"$job"`}, "probe": {`job=~"$job"`, `instance=~"$instance"`}}
	for _, name := range []string{"job", "instance", "probe"} {
		v := vars[name]
		if v == nil {
			continue
		}
		if str(v["type"]) != "query" || !datasourceIsVariable(v["datasource"]) {
			t.Errorf("variable %s: want a query variable on ${datasource}", name)
		}
		q, err := variableQuery(mustJSON(t, v["query"]))
		if err != nil {
			t.Errorf("variable %s: %v", name, err)
		}
		m := labelValuesRE.FindStringSubmatch(q)
		if m == nil || !strings.HasSuffix(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(q), ")")), name) {
			t.Errorf("variable %s: query %q, want label_values(SELECTOR, %s)", name, q, name)
			continue
		}
		for _, need := range needs[name] {
			if !strings.Contains(q, need) {
				t.Errorf("variable %s: query %q does not narrow by %s", name, q, need)
			}
		}
		for _, metric := range metricNames(m[1]) {
			if _, ok := known[metric]; !ok {
				t.Errorf("variable %s: unknown metric %s", name, metric)
			}
		}
		multi := v["multi"] == true && v["includeAll"] == true && str(v["allValue"]) == ".*"
		if wantMulti := name != "probe" || spec.probeMulti; multi != wantMulti {
			t.Errorf("variable %s: multi/includeAll/allValue=.* is %v, want %v", name, multi, wantMulti)
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func checkPanel(t *testing.T, p map[string]any, known map[string][]string) {
	t.Helper()
	title := str(p["title"])
	if title == "" {
		t.Errorf("panel %v has no title", p["id"])
	}
	if !datasourceIsVariable(p["datasource"]) {
		t.Errorf("panel %q: datasource %v, want ${datasource}", title, p["datasource"])
	}
	if strings.TrimSpace(str(p["description"])) == "" {
		t.Errorf("panel %q: no description", title)
	}
	if str(obj(obj(p["fieldConfig"])["defaults"])["unit"]) == "" {
		t.Errorf("panel %q: no unit (fieldConfig.defaults.unit)", title)
	}
	targets := list(p["targets"])
	if len(targets) == 0 {
		t.Errorf("panel %q: no queries", title)
	}
	refs := map[string]bool{}
	for _, tg := range targets {
		m := obj(tg)
		ref := str(m["refId"])
		if ref == "" || refs[ref] {
			t.Errorf("panel %q: missing or repeated refId %q", title, ref)
		}
		refs[ref] = true
		if ds, ok := m["datasource"]; ok && !datasourceIsVariable(ds) {
			t.Errorf("panel %q / %s: datasource %v, want ${datasource}", title, ref, ds)
		}
		expr := str(m["expr"])
		if strings.TrimSpace(expr) == "" {
			t.Errorf("panel %q / %s: empty expr", title, ref)
			continue
		}
		for _, problem := range dashboardExprProblems(expr, known) {
			t.Errorf("panel %q / %s: %s\n%s", title, ref, problem, expr)
		}
	}
}

// dashboardExprProblems checks one dashboard query: every selector names a known metric,
// is narrowed by the job, instance and (where the metric has it) probe variables, and
// uses only labels the metric has; every range is $__rate_interval.
func dashboardExprProblems(expr string, known map[string][]string) []string {
	var problems []string
	s := scanExpr(expr)
	if len(s.selectors) == 0 {
		problems = append(problems, "no metric selector")
	}
	for _, sel := range s.selectors {
		labels, ok := known[sel.name]
		if !ok {
			problems = append(problems, fmt.Sprintf("metric %q is neither exported by loadprobe nor recorded by rules.yml", sel.name))
			continue
		}
		want := map[string]string{"job": "$job", "instance": "$instance"}
		if slices.Contains(labels, "probe") {
			want["probe"] = "$probe"
		}
		for _, m := range sel.matchers {
			if w, ok := want[m.label]; ok && m.op == "=~" && m.value == w {
				delete(want, m.label)
				continue
			}
			if m.label != "job" && m.label != "instance" && !slices.Contains(labels, m.label) {
				problems = append(problems, fmt.Sprintf("%s has no label %q", sel.name, m.label))
			}
		}
		for _, l := range sortedKeys(want) {
			problems = append(problems, fmt.Sprintf(`%s is not narrowed by %s=~"%s"`, sel.name, l, want[l]))
		}
	}
	for _, r := range s.ranges {
		if r != "$__rate_interval" {
			problems = append(problems, fmt.Sprintf("range [%s]: dashboards use [$__rate_interval] in every rate() and increase()", r))
		}
	}
	for _, c := range s.calls {
		if (c == "rate" || c == "increase" || c == "irate") && len(s.ranges) == 0 {
			problems = append(problems, c+"() without a range")
		}
	}
	return problems
}

func TestDashboardExprProblemsCatchesMistakes(t *testing.T) {
	known := map[string][]string{"loadprobe_requests_total": {"probe", "outcome"}, "up": {}}
	for expr, want := range map[string]string{
		`sum(rate(loadprobe_requests_total{job=~"$job", instance=~"$instance", probe=~"$probe"}[$__rate_interval]))`: "",
		`up{job=~"$job", instance=~"$instance"}`:                                                                            "",
		`sum(rate(loadprobe_requests_total{job=~"$job", instance=~"$instance"}[$__rate_interval]))`:                         `not narrowed by probe`,
		`rate(loadprobe_requests_total{job=~"$job", instance=~"$instance", probe=~"$probe"}[5m])`:                           `range [5m]`,
		`rate(loadprobe_request_total{job=~"$job", instance=~"$instance", probe=~"$probe"}[$__rate_interval])`:              `metric "loadprobe_request_total"`,
		`loadprobe_requests_total{job=~"$job", instance=~"$instance", probe=~"$probe", reason="timeout"}`:                   `no label "reason"`,
		`loadprobe_requests_total{job="$job", instance=~"$instance", probe=~"$probe"}`:                                      `not narrowed by job`,
		`sum by (probe) (loadprobe_requests_total{job=~"$job", instance=~"$instance", probe=~"$probe"}) or up{job=~"$job"}`: `up is not narrowed by instance`,
	} {
		got := strings.Join(dashboardExprProblems(expr, known), "; ")
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%s\n  problems %q, want one containing %q", expr, got, want)
		}
	}
}

var (
	recordNameRE = regexp.MustCompile(`^[a-z][a-z_]*:[a-z][a-z0-9_]*:[a-z0-9_]+$`)
	// The only windows rules.yml and alerts.yml may use: the substitution contract.
	allowedRange = map[string]bool{"[7d]": true, "[15m]": true, "[5m]": true, "[6h]": true, "[14d]": true}
	// Alerts on a state (0 or 1), where $value tells nothing.
	valuelessAlerts = map[string]bool{"LoadprobeRunInvalid": true, "LoadprobeConfigReloadFailed": true, "LoadprobeDown": true, "LoadprobeFleetShardMissing": true}
)

func TestRuleFiles(t *testing.T) {
	known := knownMetrics(t)
	for _, file := range ruleFiles {
		rf, err := parseRuleFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				name := r.Record + r.Alert
				for _, rng := range scanExpr(r.Expr).ranges {
					if !allowedRange["["+rng+"]"] {
						t.Errorf("%s: %s: window [%s] is not one of the substitution tokens %v (see the file's header)", file, name, rng, sortedKeys(allowedRange))
					}
				}
				for _, m := range metricNames(r.Expr) {
					if _, ok := known[m]; !ok {
						t.Errorf("%s: %s: unknown metric %s", file, name, m)
					}
				}
				if r.Record != "" {
					if !recordNameRE.MatchString(r.Record) {
						t.Errorf("%s: recording rule %s: want level:metric:operations", file, r.Record)
					}
					continue
				}
				if r.For == "" {
					t.Errorf("%s: alert %s has no for:", file, name)
				}
				if s := r.Labels["severity"]; s != "critical" && s != "warning" {
					t.Errorf("%s: alert %s: severity %q, want critical or warning", file, name, s)
				}
				for _, a := range []string{"summary", "description", "runbook_url"} {
					if strings.TrimSpace(r.Annotations[a]) == "" {
						t.Errorf("%s: alert %s has no %s annotation", file, name, a)
					}
				}
				if _, ok := r.Annotations["runbook"]; ok {
					t.Errorf("%s: alert %s has a runbook annotation: its runbook goes in docs/alerts.md, linked by runbook_url", file, name)
				}
				desc := r.Annotations["description"]
				if !strings.Contains(desc, "$labels") {
					t.Errorf("%s: alert %s: the description does not name the series ($labels)", file, name)
				}
				if !strings.Contains(desc, "$value") && !valuelessAlerts[name] {
					t.Errorf("%s: alert %s: the description does not show the measured value ($value)", file, name)
				}
			}
		}
	}
}

// Every alert needs a firing case (with labels and all three annotations) and a
// not-firing case in alerts_test.yml.
func TestEveryAlertIsUnitTested(t *testing.T) {
	rf, err := parseRuleFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []struct {
					ExpLabels      map[string]string `yaml:"exp_labels"`
					ExpAnnotations map[string]string `yaml:"exp_annotations"`
				} `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(raw, &tests); err != nil {
		t.Fatal(err)
	}
	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) == 0 {
				quiet[a.Alertname] = true
			}
			for _, e := range a.ExpAlerts {
				if e.ExpLabels["severity"] != "" && e.ExpAnnotations["summary"] != "" && e.ExpAnnotations["description"] != "" && e.ExpAnnotations["runbook_url"] != "" {
					firing[a.Alertname] = true
				}
			}
		}
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if !firing[r.Alert] {
				t.Errorf("alert %s: no firing case with exp_labels (severity) and exp_annotations (summary, description, runbook_url) in alerts_test.yml", r.Alert)
			}
			if !quiet[r.Alert] {
				t.Errorf("alert %s: no not-firing case (exp_alerts: []) in alerts_test.yml", r.Alert)
			}
		}
	}
}

func runPromtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(realpart.Find(t, "promtool", promInstall), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("promtool %s\n%s", strings.Join(args, " "), out)
}

func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, ".", "check", "rules", "rules.yml", "alerts.yml")
}

func TestPromtoolTestRules(t *testing.T) {
	runPromtool(t, ".", "test", "rules", "alerts_test.yml", "rules_test.yml")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

const promInstall = "apt-get install --no-install-recommends prometheus"

// alertRow is a row of docs/dashboards.md's alert table: | `Name` | severity |.
var alertRow = regexp.MustCompile("(?m)^\\| `(Loadprobe[A-Za-z]+)` \\| ([a-z]+) \\|")

// docs/dashboards.md lists every alert of alerts.yml with its severity, and
// no alert the file lacks.
func TestDashboardsDocListsEveryAlert(t *testing.T) {
	rf, err := parseRuleFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/dashboards.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, m := range alertRow.FindAllStringSubmatch(string(doc), -1) {
		listed[m[1]] = m[2]
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			severity, ok := listed[r.Alert]
			switch {
			case !ok:
				t.Errorf("docs/dashboards.md does not list %s", r.Alert)
			case severity != r.Labels["severity"]:
				t.Errorf("docs/dashboards.md lists %s as %s; alerts.yml says %s", r.Alert, severity, r.Labels["severity"])
			}
			delete(listed, r.Alert)
		}
	}
	for name := range listed {
		t.Errorf("docs/dashboards.md lists %s, which alerts.yml lacks", name)
	}
}
