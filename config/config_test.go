package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
)

// badConfigs maps every file in testdata/bad to the exact error Load gives.
var badConfigs = map[string]string{
	"abort-error-ratio.yml":           "testdata/bad/abort-error-ratio.yml:9: probes[0].abort.error_ratio: must be in (0, 1] (got 0)",
	"bad-duration.yml":                "testdata/bad/bad-duration.yml:6: probes[0].request.timeout: unknown unit \" seconds\" in duration \"5 seconds\"",
	"bad-header.yml":                  "testdata/bad/bad-header.yml:8: probes[0].request.headers: \"X Trace\" is not a valid header name",
	"template-too-large.yml":          "testdata/bad/template-too-large.yml:4: probes[0].request: the templates can render a request of 17825823 bytes (url, headers and body), above the bound of 16777216 (16 MiB)",
	"bad-method.yml":                  "testdata/bad/bad-method.yml:6: probes[0].request.method: \"GE T\" is not a valid HTTP method",
	"bad-name.yml":                    "testdata/bad/bad-name.yml:3: probes[0].name: \"work probe\" is not a valid name: use letters, digits, _ and -",
	"bad-scheme.yml":                  "testdata/bad/bad-scheme.yml:5: probes[0].request.url: scheme must be http, https, ws, wss, grpc or grpcs (got \"ftp\")",
	"bad-tls-version.yml":             "testdata/bad/bad-tls-version.yml:7: probes[0].request.tls_config.min_version: unknown TLS version: TLS99",
	"body-and-body-file.yml":          "testdata/bad/body-and-body-file.yml:8: probes[0].request.body_file: body and body_file are exclusive",
	"body-file-directory.yml":         "testdata/bad/body-file-directory.yml:7: probes[0].request.body_file: cannot read testdata: not a regular file",
	"body-file-missing.yml":           "testdata/bad/body-file-missing.yml:7: probes[0].request.body_file: cannot read testdata/bad/missing.json: no such file or directory",
	"continuous-phases.yml":           "testdata/bad/continuous-phases.yml:10: probes[0].schedule.continuous: a continuous probe runs a fixed load (rate: [N] or concurrency: [N]), not phases",
	"continuous-ramp.yml":             "testdata/bad/continuous-ramp.yml:9: probes[0].schedule.continuous: a continuous probe runs a fixed load (rate: [N]), not a ramp of 2 levels",
	"control-chain.yml":               "testdata/bad/control-chain.yml:8: probes[0].control: probe \"b\" has a control of its own (\"c\"): controls do not chain",
	"control-missing.yml":             "testdata/bad/control-missing.yml:8: probes[0].control: no probe is named \"noop\"",
	"control-other-mode.yml":          "testdata/bad/control-other-mode.yml:8: probes[0].control: probe \"noop\" runs a rate load; a control must run the same kind of load as the probe (concurrency)",
	"control-self.yml":                "testdata/bad/control-self.yml:8: probes[0].control: a probe cannot be its own control",
	"duplicate-key.yml":               "testdata/bad/duplicate-key.yml:8: probes[0]: duplicate key \"load\" (first at line 6)",
	"duplicate-name.yml":              "testdata/bad/duplicate-name.yml:8: probes[1].name: duplicate probe name \"work\" (first used by probes[0])",
	"empty-levels.yml":                "testdata/bad/empty-levels.yml:7: probes[0].load.concurrency: at least one level is required",
	"error-ratio-budget.yml":          "testdata/bad/error-ratio-budget.yml:9: probes[0].rules.error_ratio_budget: must be in [0, 1) (got 1)",
	"glob-ipv6-brackets.yml":          "testdata/bad/glob-ipv6-brackets.yml:3: allowed_targets: \"[::1]\" is a one-character class: write an IPv6 host without brackets (\"::1\")",
	"glob-with-port.yml":              "testdata/bad/glob-with-port.yml:1: allowed_targets: \"127.0.0.1:8080\" has a port: globs match the host alone",
	"glob-with-scheme.yml":            "testdata/bad/glob-with-scheme.yml:2: allowed_targets: \"http://127.0.0.1\" is not a host glob: give the host alone, without scheme or path",
	"host-not-allowed.yml":            "testdata/bad/host-not-allowed.yml:5: probes[0].request.url: host \"example.com\" is not in allowed_targets",
	"http-client-config.yml":          "testdata/bad/http-client-config.yml:4: probes[0].request: at most one of basic_auth, oauth2, bearer_token & bearer_token_file must be configured",
	"jitter-too-long.yml":             "testdata/bad/jitter-too-long.yml:10: probes[0].schedule.jitter: must be shorter than interval (1m)",
	"knee-fraction.yml":               "testdata/bad/knee-fraction.yml:9: probes[0].rules.knee_fraction: must be in (0, 1] (got 1.5)",
	"latency-quantile.yml":            "testdata/bad/latency-quantile.yml:9: probes[0].rules.latency_quantile: must be in (0, 1) (got 1)",
	"level-above-max.yml":             "testdata/bad/level-above-max.yml:8: probes[0].load.concurrency: level 200 is above max_concurrency (100)",
	"levels-not-increasing.yml":       "testdata/bad/levels-not-increasing.yml:21: probes[2].load.concurrency: levels must increase (got 8 after 16)",
	"malformed-glob.yml":              "testdata/bad/malformed-glob.yml:3: allowed_targets: malformed glob \"[a-\": syntax error in pattern",
	"max-concurrency-zero.yml":        "testdata/bad/max-concurrency-zero.yml:2: max_concurrency: must be positive (got 0)",
	"max-rate-nan.yml":                "testdata/bad/max-rate-nan.yml:2: max_rate: must be a positive number (got .nan)",
	"missing-allowed-targets.yml":     "testdata/bad/missing-allowed-targets.yml:1: allowed_targets: at least one host glob is required: load goes only to hosts listed here",
	"missing-load.yml":                "testdata/bad/missing-load.yml:3: probes[0].load: one of concurrency, rate, phases or search is required",
	"missing-name.yml":                "testdata/bad/missing-name.yml:3: probes[0].name: required",
	"missing-url.yml":                 "testdata/bad/missing-url.yml:4: probes[0].request.url: required",
	"multiple-errors.yml":             "testdata/bad/multiple-errors.yml:2: max_rate: must be a positive number (got 0)\ntestdata/bad/multiple-errors.yml:6: probes[0].request.url: host \"10.0.0.1\" is not in allowed_targets\ntestdata/bad/multiple-errors.yml:8: probes[0].load.concurrency: levels must increase (got 2 after 4)\ntestdata/bad/multiple-errors.yml:10: probes[0].rules.knee_fraction: must be in (0, 1] (got 0)",
	"negative-min-capacity.yml":       "testdata/bad/negative-min-capacity.yml:9: probes[0].expect.min_capacity: must be a non-negative number (got -1)",
	"no-load-kind.yml":                "testdata/bad/no-load-kind.yml:6: probes[0].load: one of concurrency, rate, phases or search is required",
	"not-a-mapping.yml":               "testdata/bad/not-a-mapping.yml:1: expected a mapping, got a list",
	"phase-duplicate-name.yml":        "testdata/bad/phase-duplicate-name.yml:11: probes[0].load.phases[1].name: duplicate phase name \"steady\" (first used by phases[0])",
	"phase-missing-duration.yml":      "testdata/bad/phase-missing-duration.yml:9: probes[0].load.phases[1].duration: must be positive (got 0s)",
	"phase-ramp-above-max.yml":        "testdata/bad/phase-ramp-above-max.yml:9: probes[0].load.phases[0].ramp_to: 1000 is above max_rate (100)",
	"phase-zero-rate.yml":             "testdata/bad/phase-zero-rate.yml:8: probes[0].load.phases[0].rate: must be positive (got 0)",
	"rate-above-max.yml":              "testdata/bad/rate-above-max.yml:8: probes[0].load.rate: level 2000 is above max_rate (1000)",
	"rate-not-increasing.yml":         "testdata/bad/rate-not-increasing.yml:7: probes[0].load.rate: levels must increase (got 100.5 after 100.5)",
	"streams-zero.yml":                "testdata/bad/streams-zero.yml:7: probes[0].request.http2.streams_per_connection: must be in [1, 1000] (got 0)",
	"status-code.yml":                 "testdata/bad/status-code.yml:8: probes[0].request.valid_status_codes: 700 is not an HTTP status code (100-599)",
	"syntax-error-indent.yml":         "testdata/bad/syntax-error-indent.yml:8: did not find expected key",
	"syntax-error.yml":                "testdata/bad/syntax-error.yml:6: did not find expected key",
	"two-documents.yml":               "testdata/bad/two-documents.yml:9: a config file holds one YAML document, found a second",
	"two-load-kinds.yml":              "testdata/bad/two-load-kinds.yml:8: probes[0].load: only one of concurrency, rate, phases and search may be set (got concurrency and rate)",
	"unknown-key-basic-auth.yml":      "testdata/bad/unknown-key-basic-auth.yml:8: probes[0].request.basic_auth: unknown key \"passwd\" (did you mean \"password\"?)",
	"unknown-key-inline.yml":          "testdata/bad/unknown-key-inline.yml:6: probes[0].request: unknown key \"follow_redirect\" (did you mean \"follow_redirects\"?)",
	"unknown-key-phase.yml":           "testdata/bad/unknown-key-phase.yml:8: probes[0].load.phases[0]: unknown key \"duraton\" (did you mean \"duration\"?)",
	"unknown-key-schedule.yml":        "testdata/bad/unknown-key-schedule.yml:9: probes[0].schedule: unknown key \"every\"",
	"unknown-key-tls.yml":             "testdata/bad/unknown-key-tls.yml:7: probes[0].request.tls_config: unknown key \"insecure\"",
	"unknown-key-top.yml":             "testdata/bad/unknown-key-top.yml:2: unknown key \"max_conccurency\" (did you mean \"max_concurrency\"?)",
	"unknown-key.yml":                 "testdata/bad/unknown-key.yml:6: probes[0].request: unknown key \"tiemout\" (did you mean \"timeout\"?)",
	"url-bad-port.yml":                "testdata/bad/url-bad-port.yml:5: probes[0].request.url: invalid port \"99999\"",
	"url-credentials.yml":             "testdata/bad/url-credentials.yml:5: probes[0].request.url: credentials in the URL are not allowed: use basic_auth",
	"url-no-scheme-port.yml":          "testdata/bad/url-no-scheme-port.yml:5: probes[0].request.url: URL \"127.0.0.1:8080/work\": missing scheme (http://, https://, ws://, wss://, grpc://, grpcs://)",
	"url-no-scheme-host.yml":          "testdata/bad/url-no-scheme-host.yml:5: probes[0].request.url: URL \"localhost/work\": missing scheme (http://, https://, ws://, wss://, grpc://, grpcs://)",
	"url-no-host.yml":                 "testdata/bad/url-no-host.yml:5: probes[0].request.url: URL \"http:///work\" has no host",
	"warmup-too-long.yml":             "testdata/bad/warmup-too-long.yml:9: probes[0].load.warmup: must be shorter than step_duration (5s)",
	"warmup-longer-than-phase.yml":    "testdata/bad/warmup-longer-than-phase.yml:10: probes[0].load.warmup: must be shorter than every phase (\"spike\" lasts 1s)",
	"header-control-character.yml":    "testdata/bad/header-control-character.yml:7: probes[0].request.headers: the value of X-Trace holds a control character",
	"wrong-type-level.yml":            "testdata/bad/wrong-type-level.yml:7: probes[0].load.concurrency[1]: expected an integer, got a string \"two\"",
	"wrong-type-section.yml":          "testdata/bad/wrong-type-section.yml:8: probes[0].rules: expected a mapping, got a string \"strict\"",
	"wrong-type.yml":                  "testdata/bad/wrong-type.yml:8: probes[0].load.max_in_flight: expected an integer, got a string \"many\"",
	"zero-interval.yml":               "testdata/bad/zero-interval.yml:9: probes[0].schedule.interval: must be positive (got 0s)",
	"zero-latency-budget.yml":         "testdata/bad/zero-latency-budget.yml:9: probes[0].rules.latency_budget: must be positive (got 0s)",
	"expect-error-ratio.yml":          "testdata/bad/expect-error-ratio.yml:9: probes[0].expect.max_error_ratio: must be in [0, 1) (got 1.5)",
	"zero-level.yml":                  "testdata/bad/zero-level.yml:7: probes[0].load.concurrency: levels must be positive (got 0)",
	"zero-max-in-flight.yml":          "testdata/bad/zero-max-in-flight.yml:8: probes[0].load.max_in_flight: must be positive (got 0)",
	"zero-settle-timeout.yml":         "testdata/bad/zero-settle-timeout.yml:8: probes[0].load.settle_timeout: must be positive (got 0s)",
	"zero-step-duration.yml":          "testdata/bad/zero-step-duration.yml:8: probes[0].load.step_duration: must be positive (got 0s)",
	"zero-timeout.yml":                "testdata/bad/zero-timeout.yml:6: probes[0].request.timeout: must be positive (got 0s)",
	"too-many-phases.yml":             "testdata/bad/too-many-phases.yml:7: probes[0].load.phases: 1001 phases, more than 1000",
	"phase-long-name.yml":             "testdata/bad/phase-long-name.yml:9: probes[0].load.phases[1].name: longer than 128 characters",
	"every-error-reported.yml":        "testdata/bad/every-error-reported.yml:6: probes[0].request.timeout: unknown unit \" seconds\" in duration \"5 seconds\"\ntestdata/bad/every-error-reported.yml:9: probes[0].load.step_duration: unknown unit \" s\" in duration \"10 s\"\ntestdata/bad/every-error-reported.yml:11: probes[0].rules.knee_fraction: must be in (0, 1] (got 2)\ntestdata/bad/every-error-reported.yml:12: probes[1].name: duplicate probe name \"work\" (first used by probes[0])\ntestdata/bad/every-error-reported.yml:14: probes[1].request.url: host \"10.0.0.1\" is not in allowed_targets\ntestdata/bad/every-error-reported.yml:16: probes[1].load.rate: levels must increase (got 5 after 10)",
	"glob-cross-label.yml":            "testdata/bad/glob-cross-label.yml:5: probes[0].request.url: host \"127.0.0.1.attacker.example\" is not in allowed_targets",
	"glob-star.yml":                   "testdata/bad/glob-star.yml:2: allowed_targets: \"*\" would allow every host: list the hosts load may go to, with a * standing for one DNS label (\"*.staging.example.com\"); there is no switch to allow all\ntestdata/bad/glob-star.yml:6: probes[0].request.url: host \"127.0.0.1\" is not in allowed_targets",
	"host-header-not-allowed.yml":     "testdata/bad/host-header-not-allowed.yml:8: probes[0].request.headers: the Host header names host \"admin.internal.example\", which is not in allowed_targets",
	"long-name.yml":                   "testdata/bad/long-name.yml:3: probes[0].name: longer than 128 characters",
	"password-file-missing.yml":       "testdata/bad/password-file-missing.yml:8: probes[0].request.basic_auth.password_file: cannot read testdata/bad/missing-password.txt: no such file or directory",
	"proxy-not-allowed.yml":           "testdata/bad/proxy-not-allowed.yml:6: probes[0].request.proxy_url: proxy host \"proxy.attacker.example\" is not in allowed_targets",
	"run-longer-than-interval.yml":    "testdata/bad/run-longer-than-interval.yml:10: probes[0].schedule.interval: a run lasts 30m, longer than the interval (20m): lengthen the interval or shorten the run",
	"tls-ca-file-missing.yml":         "testdata/bad/tls-ca-file-missing.yml:7: probes[0].request.tls_config.ca_file: cannot read testdata/bad/missing-ca.pem: no such file or directory",
	"token-url-not-allowed.yml":       "testdata/bad/token-url-not-allowed.yml:9: probes[0].request.oauth2.token_url: token host \"auth.attacker.example\" is not in allowed_targets",
	"too-many-errors.yml":             "testdata/bad/too-many-errors.yml:8: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:9: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:10: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:11: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:12: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:13: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:14: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:15: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:16: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:17: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:18: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:19: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:20: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:21: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:22: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:23: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:24: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:25: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:26: probes[0].load.concurrency: levels must be positive (got 0)\ntestdata/bad/too-many-errors.yml:27: probes[0].load.concurrency: levels must be positive (got 0)\nand 5 more errors",
	"search-and-ramp.yml":             "testdata/bad/search-and-ramp.yml:8: probes[0].load: only one of concurrency, rate, phases and search may be set (got concurrency and search)",
	"search-two-axes.yml":             "testdata/bad/search-two-axes.yml:9: probes[0].load.search.rate: only one of concurrency and rate may be set: a search moves along one axis",
	"search-range.yml":                "testdata/bad/search-range.yml:9: probes[0].load.search.concurrency.from: must be a whole number of connections (got 1.5)\ntestdata/bad/search-range.yml:9: probes[0].load.search.concurrency.max: 128 is above max_concurrency (100)\ntestdata/bad/search-range.yml:10: probes[0].load.search.precision: must be in (0, 1): the bracket's width as a fraction of its level (got 1.5)\ntestdata/bad/search-range.yml:11: probes[0].load.search.max_steps: must be between 1 and 1000 (got 0)",
	"search-from-above-max.yml":       "testdata/bad/search-from-above-max.yml:8: probes[0].load.search.rate.max: must be at least from (500), got 50",
	"search-continuous.yml":           "testdata/bad/search-continuous.yml:9: probes[0].schedule.continuous: a continuous probe runs a fixed load (rate: [N] or concurrency: [N]), not a search",
	"search-longer-than-interval.yml": "testdata/bad/search-longer-than-interval.yml:10: probes[0].schedule.interval: a run lasts 30m, longer than the interval (20m): lengthen the interval or shorten the run",
	"ws-sessions-http.yml":            "testdata/bad/ws-sessions-http.yml:8: probes[0].load.sessions: applies to WebSocket probes (ws:// or wss:// URLs) only",
	"ws-sessions-concurrency.yml":     "testdata/bad/ws-sessions-concurrency.yml:8: probes[0].load.sessions: applies to open-loop loads (rate, phases): a concurrency level is already a number of sessions",
	"ws-method.yml":                   "testdata/bad/ws-method.yml:6: probes[0].request.method: a WebSocket handshake is a GET (got \"POST\")",
	"ws-handshake-header.yml":         "testdata/bad/ws-handshake-header.yml:8: probes[0].request.headers: Sec-WebSocket-Key is set by the WebSocket handshake itself",
	"too-many-levels.yml":             "testdata/bad/too-many-levels.yml:8: probes[0].load.concurrency: 1001 levels, more than 1000",
	"data-empty.yml":                  "testdata/bad/data-empty.yml:6: probes[0].data.file: testdata/bad/empty.csv: empty: the first row names the columns",
	"data-file-missing.yml":           "testdata/bad/data-file-missing.yml:5: probes[0].data.file: cannot read testdata/bad/missing-users.csv: no such file or directory",
	"data-order.yml":                  "testdata/bad/data-order.yml:5: probes[0].data.order: \"shuffled\" is not an order: use sequential or random",
	"data-ragged-csv.yml":             "testdata/bad/data-ragged-csv.yml:6: probes[0].data.file: testdata/bad/ragged.csv: line 3: the row has 1 of the header's 2 fields",
	"data-ragged-jsonl.yml":           "testdata/bad/data-ragged-jsonl.yml:6: probes[0].data.file: testdata/bad/ragged.jsonl: line 2: keys user, the first line has id, user",
	"template-in-host.yml":            "testdata/bad/template-in-host.yml:5: probes[0].request.url: a template cannot stand in the scheme, host or port: allowed_targets judges the host at load",
	"template-unknown-function.yml":   "testdata/bad/template-unknown-function.yml:7: probes[0].request.headers.X-Request-Id: {{uuid4}}: unknown function \"uuid4\" (known: index, random_int, random_string, uuid, env; a value is written .name)",
	"template-unknown-variable.yml":   "testdata/bad/template-unknown-variable.yml:8: probes[0].request.body: {{.pasword}}: \"pasword\" is neither a column of data nor a value captured by an earlier step",
	"flow-and-request.yml":            "testdata/bad/flow-and-request.yml:6: probes[0].flow: flow and request are exclusive: a flow's steps carry their requests",
	"flow-capture-later.yml":          "testdata/bad/flow-capture-later.yml:8: probes[0].flow[0].request.headers.Authorization: {{.token}}: \"token\" is neither a column of data nor a value captured by an earlier step",
	"flow-capture-regex.yml":          "testdata/bad/flow-capture-regex.yml:8: probes[0].flow[0].capture.token.regex: \"token\\\": \\\"[^\\\"]+\\\"\" has no group: the first group is the value captured\ntestdata/bad/flow-capture-regex.yml:9: probes[0].flow[0].think: min must be at least 0 and max at least min (got 2s to 1s)",
	"generator-cpu-budget.yml":        "testdata/bad/generator-cpu-budget.yml:9: probes[0].rules.generator_cpu_budget: must be in (0, 1] (got 1.5)",
	"max-parallel-runs-zero.yml":      "testdata/bad/max-parallel-runs-zero.yml:2: max_parallel_runs: must be positive (got 0)",
}

func TestLoadBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("only %d bad configs", len(files))
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := filepath.Base(file)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := badConfigs[name]
			if !ok {
				t.Fatalf("no expected error for %s", file)
			}
			c, err := LoadFile(file)
			if err == nil {
				t.Fatalf("LoadFile(%s) accepted the config", file)
			}
			if c != nil {
				t.Errorf("LoadFile(%s) returned a config with the error", file)
			}
			if got := err.Error(); got != want {
				t.Errorf("LoadFile(%s):\n got: %s\nwant: %s", file, got, want)
			}
			var e *lineError
			if !errors.As(err, &e) || e.File != file || e.Line < 1 {
				t.Errorf("LoadFile(%s): error is not a *lineError naming the file and a line: %#v", file, e)
			}
		})
	}
	for name := range badConfigs {
		if !seen[name] {
			t.Errorf("badConfigs names %s, which is not in testdata/bad", name)
		}
	}
}

func TestLoadGoodConfig(t *testing.T) {
	c, err := LoadFile("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConcurrency != 4096 || c.MaxRate != 100000 {
		t.Errorf("caps: got %d and %g, want the defaults", c.MaxConcurrency, c.MaxRate)
	}
	if len(c.Probes) != 3 {
		t.Fatalf("got %d probes, want 3", len(c.Probes))
	}

	work := c.Probes[0]
	r := work.Request
	if r.Method != "POST" || r.Timeout != model.Duration(time.Second) || !r.KeepAlive {
		t.Errorf("request: got method %q timeout %s keep_alive %t", r.Method, r.Timeout, r.KeepAlive)
	}
	// Defaults of the inlined client settings come from DefaultRequest.
	if r.HTTPClientConfig.FollowRedirects || !r.HTTPClientConfig.EnableHTTP2 {
		t.Errorf("client: got follow_redirects %t enable_http2 %t, want false and true", r.HTTPClientConfig.FollowRedirects, r.HTTPClientConfig.EnableHTTP2)
	}
	// Relative paths are resolved against the config file's directory.
	if want := filepath.Join("testdata", "payload.json"); r.BodyFile != want {
		t.Errorf("body_file: got %q, want %q", r.BodyFile, want)
	}
	payload, err := os.ReadFile("testdata/payload.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := bodyOf(c.Plans()[0]); got != string(payload) {
		t.Errorf("payload: got %q, want %q", got, payload)
	}
	if r.HTTPClientConfig.BasicAuth == nil || r.HTTPClientConfig.BasicAuth.PasswordFile != filepath.Join("testdata", "password.txt") {
		t.Errorf("basic_auth: got %+v, want password_file resolved against testdata", r.HTTPClientConfig.BasicAuth)
	}
	if r.HTTPClientConfig.TLSConfig.CAFile != filepath.Join("testdata", "ca.pem") {
		t.Errorf("tls_config.ca_file: got %q", r.HTTPClientConfig.TLSConfig.CAFile)
	}
	if work.Load.StepDuration != defaultLoad.StepDuration || work.Load.MaxInFlight != 1000 ||
		work.Load.SettleTimeout != defaultLoad.SettleTimeout || work.Load.Mode() != plan.ModeConcurrency {
		t.Errorf("load defaults: got %+v", work.Load)
	}
	if work.Rules != plan.DefaultRules || work.Abort != defaultAbort || work.Schedule != defaultSchedule {
		t.Errorf("section defaults: got %+v %+v %+v", work.Rules, work.Abort, work.Schedule)
	}
	if work.Control != "noop" {
		t.Errorf("control: got %q", work.Control)
	}
	for code, want := range map[int]bool{199: false, 200: true, 204: true, 299: true, 301: false, 503: false, -1: false, 1000: false} {
		if got := c.Plans()[0].Request.ValidCode(code); got != want {
			t.Errorf("work: ValidCode(%d) = %t, want %t", code, got, want)
		}
	}

	noop := c.Probes[1]
	if got := bodyOf(c.Plans()[1]); got != "ping" || noop.Request.Method != "GET" {
		t.Errorf("noop: got payload %q method %q", got, noop.Request.Method)
	}
	// A section that is present keeps the defaults of its absent keys.
	if noop.Rules.KneeFraction != 0.9 || noop.Rules.LatencyQuantile != 0.99 || noop.Rules.LatencyBudget != plan.DefaultRules.LatencyBudget {
		t.Errorf("noop rules: got %+v", noop.Rules)
	}
	for code, want := range map[int]bool{200: true, 201: false, 204: true, 301: true, 302: false} {
		if got := c.Plans()[1].Request.ValidCode(code); got != want {
			t.Errorf("noop: ValidCode(%d) = %t, want %t", code, got, want)
		}
	}

	profile := c.Probes[2]
	if profile.Load.Mode() != plan.ModePhases || len(profile.Load.Phases) != 2 {
		t.Fatalf("profile: got %+v", profile.Load)
	}
	if ph := profile.Load.Phases[1]; ph.Name != "ramp up" || ph.Rate != 1 || ph.RampTo == nil || *ph.RampTo != 5 ||
		ph.Duration != model.Duration(10*time.Second) {
		t.Errorf("profile phase 1: got %+v", ph)
	}
	if profile.Load.Phases[0].RampTo != nil {
		t.Errorf("profile phase 0: ramp_to set")
	}
	if s := profile.Schedule; s.Interval != model.Duration(30*time.Minute) || s.Jitter != model.Duration(time.Minute) || s.Continuous {
		t.Errorf("profile schedule: got %+v", s)
	}
	if got := bodyOf(c.Plans()[2]); got != "" {
		t.Errorf("profile: payload %q without body", got)
	}

	if p, ok := c.Probe("noop"); !ok || p.Request.URL != "http://api.staging.example.com/noop" {
		t.Errorf("Probe(noop) = %+v, %t", p, ok)
	}
	if _, ok := c.Probe("nope"); ok {
		t.Errorf("Probe(nope) found a probe")
	}
}

func TestExampleConfig(t *testing.T) {
	c, err := LoadFile("../examples/loadprobe.yml")
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]plan.Mode{}
	for _, p := range c.Probes {
		modes[p.Name] = p.Load.Mode()
	}
	if len(modes) < 3 {
		t.Errorf("the example has %d probes: %v", len(modes), modes)
	}
}

func BenchmarkValidCode(b *testing.B) {
	c, err := LoadFile("testdata/good.yml")
	if err != nil {
		b.Fatal(err)
	}
	p := c.Plans()[1]
	n := 0
	for i := 0; b.Loop(); i++ {
		if p.Request.ValidCode(200 + i&127) {
			n++
		}
	}
	_ = n
}

func TestAllowed(t *testing.T) {
	globs := []string{"127.0.0.1", "*.Staging.Example.com", "host-?", "::1", "10.0.0.*"}
	for host, want := range map[string]bool{
		"127.0.0.1":                  true,
		"127.0.0.2":                  false,
		"api.staging.example.com":    true,
		"API.STAGING.EXAMPLE.COM":    true,
		"staging.example.com":        false,
		"a.b.staging.example.com":    false, // a * stands for one label, as in TLS
		"127.0.0.1.attacker.example": false,
		"host-1":                     true,
		"host-10":                    false,
		"::1":                        true,
		"10.0.0.7":                   true,
		"10.0.0.7.nip.io":            false,
		"10.0.0":                     false,
		"":                           false,
	} {
		if got := allowed(globs, host); got != want {
			t.Errorf("allowed(%q) = %t, want %t", host, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "x.yml:1: allowed_targets: at least one host glob is required: load goes only to hosts listed here"},
		{"null", "~\n", "x.yml:1: allowed_targets: at least one host glob is required: load goes only to hosts listed here"},
		{"bad utf-8", "allowed_targets: [a]\nprobes: []\nx: \xff\n", "x.yml:3: invalid leading UTF-8 octet"},
		{"control character", "allowed_targets: [a]\n\x01\n", "x.yml:2: control characters are not allowed"},
		{"tab", "allowed_targets:\n\t- a\n", "x.yml:2: found character that cannot start any token"},
		{"unclosed quote", "allowed_targets: [a]\nprobes:\n  - name: \"work\n", "x.yml:3: found unexpected end of stream"},
		{"empty list elements", "allowed_targets: [a]\nprobes:\n  -\n  - ~\n  - name: a\n    load: {concurrency: [1, ~, 2]}\n    request: {url: 'http://a/'}\n",
			"x.yml:3: probes[0]: empty list element\n" +
				"x.yml:4: probes[1]: empty list element\n" +
				"x.yml:6: probes[2].load.concurrency[1]: empty list element"},
		{"anchor holder", "allowed_targets: [127.0.0.1]\nbase: &base\n  url: http://127.0.0.1/\nprobes:\n  - name: a\n    request:\n      <<: *base\n    load: {rate: [1]}\n",
			"x.yml:2: unknown key \"base\""},
		{"string level", "allowed_targets: [a]\nprobes:\n  - name: a\n    request: {url: 'http://a/'}\n    load: {rate: [1, \"2\"]}\n",
			"x.yml:5: probes[0].load.rate[1]: expected a number, got a string \"2\""},
		// A list of strings is one mistake: one error, naming the others.
		{"string levels", "allowed_targets: [a]\nprobes:\n  - name: a\n    request: {url: 'http://a/'}\n    load: {concurrency: [\"1\", 2, \"4\", \"8\"]}\n",
			"x.yml:5: probes[0].load.concurrency[0]: expected an integer, got a string \"1\" (and at [2], [3])"},
		// A list written as one string: no echo that the load kind is missing.
		{"levels in a string", "allowed_targets: [a]\nprobes:\n  - name: a\n    request: {url: 'http://a/'}\n    load: {concurrency: \"1, 2, 4\"}\n",
			"x.yml:5: probes[0].load.concurrency: expected a list, got a string \"1, 2, 4\" (write it as [1, 2, 4])"},
		{"long value", "allowed_targets: [a]\nmax_concurrency: abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\n",
			"x.yml:2: max_concurrency: expected an integer, got a string \"abcdefghijklmnopqrstuvwxyzabcdefghijklmn...\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yml", []byte(tc.in))
			if err == nil {
				t.Fatal("Parse accepted the config")
			}
			if err.Error() != tc.want {
				t.Errorf("\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
}

func TestMergeKeyLines(t *testing.T) {
	// An error in a value taken from an anchor names the anchor's line.
	in := "allowed_targets: [127.0.0.1]\n" +
		"probes:\n" +
		"  - &base\n" +
		"    name: a\n" +
		"    request: {url: http://127.0.0.1/}\n" +
		"    load: {concurrency: [1]}\n" +
		"    rules: {knee_fraction: 2}\n" +
		"  - <<: *base\n" +
		"    name: b\n"
	_, err := Parse("x.yml", []byte(in))
	want := "x.yml:7: probes[0].rules.knee_fraction: must be in (0, 1] (got 2)\n" +
		"x.yml:7: probes[1].rules.knee_fraction: must be in (0, 1] (got 2)"
	if err == nil || err.Error() != want {
		t.Errorf("\n got: %v\nwant: %s", err, want)
	}
}

func TestErrorsInFileOrder(t *testing.T) {
	_, err := LoadFile("testdata/bad/multiple-errors.yml")
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d errors, want 4:\n%s", len(lines), err)
	}
	last := 0
	for _, l := range lines {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			t.Fatalf("malformed error line %q", l)
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil || n < last {
			t.Errorf("line %q is out of order", l)
		}
		last = n
	}
}

func TestTypeErrorPaths(t *testing.T) {
	// Each probe is complete but for the value at fault.
	const probe = "request: {url: 'http://a/'}, load: {rate: [1]}, "
	for _, tc := range []struct{ in, want string }{
		{"allowed_targets: [a]\nprobes:\n - {" + probe + "name: [a]}\n",
			`x.yml:3: probes[0].name: expected a string, got a list`},
		{"allowed_targets: &a [a]\nprobes:\n - {" + probe + "name: *a}\n - {" + probe + "name: *a}\n",
			"x.yml:3: probes[0].name: expected a string, got a list\nx.yml:4: probes[1].name: expected a string, got a list"},
		{"allowed_targets: [a]\nprobes:\n - {name: a, request: {url: 'http://a/'}, load: {concurrency: [[1], 2]}}\n",
			`x.yml:3: probes[0].load.concurrency[0]: expected an integer, got a list`},
		{"allowed_targets: [a]\nprobes:\n - {name: a, request: {url: 'http://a/'}, load: {rate: [1], step_duration: [1]}}\n",
			`x.yml:3: probes[0].load.step_duration: expected a string, got a list`},
		{"allowed_targets: [a]\nprobes: {name: a}\n",
			`x.yml:2: probes: expected a list, got a mapping`},
	} {
		_, err := Parse("x.yml", []byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got: %v\nwant: %s", tc.in, err, tc.want)
		}
	}
}

// bodyOf is the body a probe's plan sends, when it is fixed.
func bodyOf(p *plan.Probe) string {
	body, _ := p.Request.Body.Literal()
	return body
}
