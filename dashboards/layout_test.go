package dashboards

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// onlySome are the kinds of series that only some probes have: a plain HTTP
// probe shows "No data" on every panel over them.
var onlySome = map[string]*regexp.Regexp{
	"fleet":     regexp.MustCompile(`loadprobe_fleet_|loadprobe_shard_info`),
	"WebSocket": regexp.MustCompile(`loadprobe_websocket_`),
	"flow":      regexp.MustCompile(`step\s*(!=\s*""|=~\s*"\.\+")`),
	"guard":     regexp.MustCompile(`loadprobe_guard_`),
	"telemetry": regexp.MustCompile(`loadprobe_headroom_|loadprobe_live_|loadprobe_bottleneck_|loadprobe_step_saturation`),
}

// The rows that only some probes use are collapsed when a dashboard opens,
// holding their panels as Grafana keeps a collapsed row's; every panel over
// series only some probes have is in one of them, and every other row is
// open.
func TestRowsOnlySomeProbesUseAreCollapsed(t *testing.T) {
	collapsed := map[string][]string{
		"loadprobe-overview.json": {"Fleet"},
		"loadprobe-probe.json":    {"WebSocket sessions", "Flow steps", "Guards", "Headroom and bottleneck"},
	}
	for _, spec := range dashboards {
		t.Run(spec.file, func(t *testing.T) {
			want := collapsed[spec.file]
			var got []string
			for _, p := range list(readJSON(t, spec.file)["panels"]) {
				p := obj(p)
				title := str(p["title"])
				if str(p["type"]) != "row" {
					for kind, re := range onlySome {
						if re.MatchString(exprs(p)) {
							t.Errorf("panel %q reads %s series, which only some probes have, outside a collapsed row", title, kind)
						}
					}
					continue
				}
				isCollapsed, _ := p["collapsed"].(bool)
				inside := list(p["panels"])
				switch {
				case isCollapsed && len(inside) == 0:
					t.Errorf("row %q is collapsed with no panels in it", title)
				case !isCollapsed && len(inside) > 0:
					t.Errorf("row %q is open but holds %d panels as a collapsed row does", title, len(inside))
				}
				if isCollapsed {
					got = append(got, title)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("collapsed rows %q, want %q", got, want)
			}
		})
	}
}

// exprs is a panel's queries, joined.
func exprs(p map[string]any) string {
	var b strings.Builder
	for _, tg := range list(p["targets"]) {
		b.WriteString(str(obj(tg)["expr"]) + "\n")
	}
	return b.String()
}

// runbookBase is where every alert's runbook_url points: its section of
// docs/alerts.md in the repository.
const runbookBase = "https://github.com/loadprobe/loadprobe/blob/main/docs/alerts.md#"

// Every alert's runbook_url points at a section of docs/alerts.md named
// after the alert, and every section there is an alert's.
func TestRunbookURLsResolve(t *testing.T) {
	page, err := os.ReadFile("../docs/alerts.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\S+)$`).FindAllStringSubmatch(string(page), -1) {
		anchors[strings.ToLower(m[1])] = true // GitHub's anchor of a heading of one word
	}
	rf, err := parseRuleFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookBase)
			if !ok || anchor != strings.ToLower(r.Alert) {
				t.Errorf("alert %s: runbook_url %q, want %s%s", r.Alert, r.Annotations["runbook_url"], runbookBase, strings.ToLower(r.Alert))
			}
			if !anchors[anchor] {
				t.Errorf("alert %s: docs/alerts.md has no section %q", r.Alert, r.Alert)
			}
			delete(anchors, anchor)
		}
	}
	if alerts < 10 {
		t.Fatalf("%d alerts in alerts.yml, want at least 10", alerts)
	}
	for a := range anchors {
		t.Errorf("docs/alerts.md has a section %q that no alert links", a)
	}
}
