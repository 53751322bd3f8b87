// Package dashboards ships loadprobe's Grafana dashboards and Prometheus rules:
//
//	loadprobe-overview.json  every probe at a glance: capacity drift, runs, live load
//	loadprobe-probe.json     one probe in depth: last ramp, latency, failures, load held, flow steps
//	rules.yml                recording rules: live rates and ratios, 7-day baselines
//	alerts.yml               alerts on capacity drift, stale or invalid runs, errors, drops, loadprobe itself
//	alerts_test.yml          promtool test rules for every alert (rules_test.yml for the recording rules)
//
// The files are the product and the package has no code: its tests hold the
// dashboards to their conventions (one datasource variable, every query narrowed
// by job, instance and probe, known metrics only, a unit and a description on
// every panel) and run promtool over the rules. Whether each expression parses
// and returns data is checked by a real Prometheus, in package integration.
package dashboards
