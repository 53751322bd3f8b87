// Package dashboards ships loadprobe's Grafana dashboards and Prometheus rules:
//
//	loadprobe-overview.json  every probe at a glance: capacity drift, runs, live load
//	loadprobe-probe.json     one probe in depth: last ramp, latency, failures, load held
//	rules.yml                recording rules: live rates and ratios, 7-day baselines
//	alerts.yml               alerts on capacity drift, stale or invalid runs, errors, drops, loadprobe itself
//	alerts_test.yml          promtool test rules for every alert (rules_test.yml for the recording rules)
//
// The files are the product; the Go code exists for tests. Expressions lists every
// PromQL expression in them, SubstituteTemplateVars turns a dashboard query into one
// Prometheus can run, and ShortenWindows makes the short-window copy of the rules that
// an integration test can wait for.
package dashboards

import "embed"

// Files holds the dashboards and rule files, as shipped.
//
//go:embed loadprobe-overview.json loadprobe-probe.json rules.yml alerts.yml
var Files embed.FS
