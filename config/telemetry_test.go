package config

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// telemetryYAML is a probe config with telemetry as its telemetry section
// and guard as its guard section.
func telemetryYAML(telemetry, guard string) string {
	return `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request:
      url: http://127.0.0.1:8080/work
    load:
      concurrency: [1, 2]
    telemetry:
` + telemetry + guard
}

func TestTelemetryBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, telemetry, want string
	}{
		{"nothing to read", "      prometheus: {url: http://prom:9090}\n",
			"t.yml:8: probes[0].telemetry: traffic, saturation or both are required: what to read of the target's Prometheus"},
		{"no url", "      traffic: up\n", "t.yml:8: probes[0].telemetry.prometheus.url: required"},
		{"the target", "      prometheus: {url: http://127.0.0.1:8080}\n      traffic: up\n",
			`t.yml:9: probes[0].telemetry.prometheus.url: 127.0.0.1:8080 is the target of probe "work": the Prometheus that watches a target is never loaded`},
		{"redirects", "      prometheus: {url: http://prom:9090, follow_redirects: true}\n      traffic: up\n",
			"t.yml:9: probes[0].telemetry.prometheus.follow_redirects: telemetry follows no redirect: one could send its queries to a host allowed_targets does not see, or to loadprobe itself"},
		{"short window", "      prometheus: {url: http://prom:9090}\n      traffic: up\n      peak_window: 30s\n",
			"t.yml:11: probes[0].telemetry.peak_window: must be at least 1m (got 30s): the live peak is the highest traffic over it"},
		{"bad resource name", "      prometheus: {url: http://prom:9090}\n      saturation: [{name: 'db pool', query: up}]\n",
			`t.yml:10: probes[0].telemetry.saturation[0].name: "db pool" is not a valid resource name: use letters, digits, _ and -`},
		{"duplicate resource", "      prometheus: {url: http://prom:9090}\n      saturation:\n        - {name: cpu, query: up}\n        - {name: cpu, query: up}\n",
			`t.yml:12: probes[0].telemetry.saturation[1].name: duplicate resource name "cpu" (first used by saturation[0])`},
		{"resource without query", "      prometheus: {url: http://prom:9090}\n      saturation: [{name: cpu}]\n",
			"t.yml:10: probes[0].telemetry.saturation[0].query: required"},
		{"typo", "      prometheus: {url: http://prom:9090}\n      traffic: up\n      peak_windw: 1d\n",
			`t.yml:11: probes[0].telemetry: unknown key "peak_windw" (did you mean "peak_window"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yml", []byte(telemetryYAML(tc.telemetry, "")))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// A guard whose Prometheus names no URL asks the telemetry's, with its
// client settings; /config hides the telemetry's secrets.
func TestTelemetryDefaultsAndTheGuardsPrometheus(t *testing.T) {
	c, err := Parse("t.yml", []byte(telemetryYAML(`      prometheus:
        url: http://prom:9090
        basic_auth: {username: u, password: hunter2}
      traffic: sum(rate(http_requests_total[5m]))
      saturation:
        - {name: workers, query: max(busy / workers)}
`, `    guard:
      prometheus:
        queries: [{name: errors, query: up, max: 1}]
`)))
	if err != nil {
		t.Fatal(err)
	}
	tel := c.Probes[0].Telemetry
	if tel.PeakWindow != model.Duration(7*24*time.Hour) || tel.Saturation[0].Max != 1 || tel.Prometheus.HTTPClientConfig.FollowRedirects {
		t.Errorf("telemetry %+v: want a 7d peak window, max 1, no redirects followed", tel)
	}
	g := c.Probes[0].Guard.Prometheus
	if g.URL != "http://prom:9090" || g.HTTPClientConfig.BasicAuth == nil || g.HTTPClientConfig.BasicAuth.Password != "hunter2" {
		t.Errorf("the guard's Prometheus %+v: want the telemetry's URL and basic auth", g.Prometheus)
	}
	if p, _ := c.Plan("work"); p.Telemetry == nil || p.Telemetry.Traffic != tel.Traffic {
		t.Errorf("the compiled probe lost its telemetry: %+v", p.Telemetry)
	}
	if shown := c.String(); strings.Contains(shown, "hunter2") || !strings.Contains(shown, "max(busy / workers)") {
		t.Errorf("/config shows the telemetry's password or hides its queries:\n%s", shown)
	}
}
