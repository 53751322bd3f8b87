package config

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
)

// guardYAML is a probe config with guard as its guard section.
func guardYAML(guard string) string {
	return `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request:
      url: http://127.0.0.1:8080/work
    load:
      concurrency: [1, 2]
      step_duration: 5s
    guard:
` + guard
}

func TestGuardBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, guard, want string
	}{
		{"window zero", "      window: 0s\n", "g.yml:10: probes[0].guard.window: must be positive (got 0s)"},
		{"window beyond the step", "      window: 6s\n      error_ratio: 0.5\n", "g.yml:10: probes[0].guard.window: is longer than step_duration (5s): no window of a step would be judged"},
		{"error ratio one", "      error_ratio: 1\n", "g.yml:10: probes[0].guard.error_ratio: must be in [0, 1) (got 1; 0: no error-ratio guard)"},
		{"latency quantile", "      latency: {quantile: 1, max: 2s}\n", "g.yml:10: probes[0].guard.latency.quantile: must be in (0, 1) (got 1)"},
		{"latency without max", "      latency: {quantile: 0.99}\n", "g.yml:10: probes[0].guard.latency.max: must be positive (got 0s)"},
		{"for zero", "      for: 0\n", "g.yml:10: probes[0].guard.for: must be from 1 to 1000 (got 0)"},
		{"unknown key", "      error_ration: 0.5\n", `g.yml:10: probes[0].guard: unknown key "error_ration" (did you mean "error_ratio"?)`},
		{"prometheus without url", "      prometheus:\n        queries: [{name: a, query: up, min: 1}]\n",
			"g.yml:10: probes[0].guard.prometheus.url: required"},
		{"prometheus is the target", "      prometheus:\n        url: http://127.0.0.1:8080\n        queries: [{name: a, query: up, min: 1}]\n",
			`g.yml:11: probes[0].guard.prometheus.url: 127.0.0.1:8080 is the target of probe "work": the Prometheus that watches a target is never loaded`},
		// Another spelling of the probe's target is the same server.
		{"prometheus is the target spelt another way", "      prometheus:\n        url: http://0x7f000001:08080/\n        queries: [{name: a, query: up, min: 1}]\n",
			`g.yml:11: probes[0].guard.prometheus.url: 0x7f000001:08080 is the target of probe "work" (as 127.0.0.1:8080): the Prometheus that watches a target is never loaded`},
		{"on_error", "      prometheus:\n        url: http://prom:9090\n        on_error: retry\n        queries: [{name: a, query: up, min: 1}]\n",
			`g.yml:12: probes[0].guard.prometheus.on_error: must be abort or ignore (got "retry")`},
		{"no queries", "      prometheus:\n        url: http://prom:9090\n",
			"g.yml:10: probes[0].guard.prometheus.queries: at least one query is required"},
		{"no range", "      prometheus:\n        url: http://prom:9090\n        queries:\n          - name: a\n            query: up\n",
			"g.yml:13: probes[0].guard.prometheus.queries[0]: min, max or both are required: the range the result must keep"},
		{"min above max", "      prometheus:\n        url: http://prom:9090\n        queries:\n          - {name: a, query: up, min: 2, max: 1}\n",
			"g.yml:13: probes[0].guard.prometheus.queries[0].max: must not be below min (2)"},
		{"live guard's name", "      prometheus:\n        url: http://prom:9090\n        queries:\n          - {name: latency, query: up, max: 1}\n",
			`g.yml:13: probes[0].guard.prometheus.queries[0].name: "latency" is the name of a live guard`},
		{"fleet guard's name", "      prometheus:\n        url: http://prom:9090\n        queries:\n          - {name: fleet, query: up, max: 1}\n",
			`g.yml:13: probes[0].guard.prometheus.queries[0].name: "fleet" is the name of the guard by which a fleet's replicas stop together`},
		{"duplicate name", "      prometheus:\n        url: http://prom:9090\n        queries:\n          - {name: a, query: up, max: 1}\n          - {name: a, query: up, max: 2}\n",
			`g.yml:14: probes[0].guard.prometheus.queries[1].name: duplicate guard name "a" (first used by queries[0])`},
		{"client settings checked", "      prometheus:\n        url: http://prom:9090\n        tls_config: {ca_file: missing.pem}\n        queries: [{name: a, query: up, max: 1}]\n",
			"g.yml:12: probes[0].guard.prometheus.tls_config.ca_file: cannot read missing.pem: no such file or directory"},
		// A guard is a few questions now and then, never load on its
		// Prometheus, and never sent on elsewhere by a redirect.
		{"interval below the floor", "      prometheus:\n        url: http://prom:9090\n        interval: 1ms\n        queries: [{name: a, query: up, max: 1}]\n",
			"g.yml:12: probes[0].guard.prometheus.interval: must be at least 1s (got 1ms): a guard asks, it must not load its Prometheus"},
		{"too many queries", "      prometheus:\n        url: http://prom:9090\n        queries:\n          - {name: q0, query: up, max: 1}\n          - {name: q1, query: up, max: 1}\n          - {name: q2, query: up, max: 1}\n          - {name: q3, query: up, max: 1}\n          - {name: q4, query: up, max: 1}\n          - {name: q5, query: up, max: 1}\n          - {name: q6, query: up, max: 1}\n          - {name: q7, query: up, max: 1}\n          - {name: q8, query: up, max: 1}\n          - {name: q9, query: up, max: 1}\n          - {name: q10, query: up, max: 1}\n          - {name: q11, query: up, max: 1}\n          - {name: q12, query: up, max: 1}\n          - {name: q13, query: up, max: 1}\n          - {name: q14, query: up, max: 1}\n          - {name: q15, query: up, max: 1}\n          - {name: q16, query: up, max: 1}\n          - {name: q17, query: up, max: 1}\n          - {name: q18, query: up, max: 1}\n          - {name: q19, query: up, max: 1}\n          - {name: q20, query: up, max: 1}\n",
			"g.yml:12: probes[0].guard.prometheus.queries: 21 queries, more than 20"},
		{"redirects", "      prometheus:\n        url: http://prom:9090\n        follow_redirects: true\n        queries: [{name: a, query: up, max: 1}]\n",
			"g.yml:12: probes[0].guard.prometheus.follow_redirects: a guard follows no redirect: one could send its queries to a host allowed_targets does not see, or to loadprobe itself"},
		{"interval typo", "      prometheus:\n        url: http://prom:9090\n        intervall: 5s\n        queries: [{name: a, query: up, max: 1}]\n",
			`g.yml:12: probes[0].guard.prometheus: unknown key "intervall" (did you mean "interval"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("g.yml", []byte(guardYAML(tc.guard)))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestGuardDefaults(t *testing.T) {
	c, err := Parse("g.yml", []byte(guardYAML(`      error_ratio: 0.5
      prometheus:
        url: http://prom:9090
        basic_auth: {username: u, password: hunter2}
        queries:
          - {name: target_5xx, query: 'sum(rate(x[30s]))', max: 5}
`)))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Probes[0].Guard
	if g.Window != model.Duration(time.Second) || g.For != 1 || !g.Live() || g.Latency != nil {
		t.Errorf("live guard %+v: want window 1s, for 1, error ratio only", g)
	}
	pg := g.Prometheus
	if pg.Interval != model.Duration(5*time.Second) || pg.OnError != plan.OnErrorAbort || pg.Queries[0].For != 1 || pg.HTTPClientConfig.FollowRedirects || !pg.HTTPClientConfig.EnableHTTP2 {
		t.Errorf("prometheus guard %+v: want interval 5s, on_error abort, for 1, the Prometheus client defaults but for redirects, which it does not follow", pg)
	}
	if q := pg.Queries[0]; q.Outside(5) || !q.Outside(5.1) || q.Outside(-1) {
		t.Errorf("query with max 5: Outside(5)=%v Outside(5.1)=%v Outside(-1)=%v", q.Outside(5), q.Outside(5.1), q.Outside(-1))
	}
	shown := c.String()
	if strings.Contains(shown, "hunter2") || !strings.Contains(shown, "target_5xx") {
		t.Errorf("/config shows the guard's password or hides its queries:\n%s", shown)
	}
	if c.Probes[0].Guard.Prometheus.HTTPClientConfig.BasicAuth.Password != "hunter2" {
		t.Error("redacting changed the config in force")
	}
	plain, err := Parse("g.yml", []byte(guardYAML("      for: 1\n")))
	if err != nil {
		t.Fatal(err)
	}
	if g := plain.Probes[0].Guard; g.Live() || g.Prometheus != nil {
		t.Errorf("a guard section without limits guards nothing, got %+v", g)
	}
}
