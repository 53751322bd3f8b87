// Package telemetry reads the Prometheus that watches a probe's target:
// the guards' queries every interval of a run, which stop the run when a
// result leaves its range (docs/guards.md), and after a run the target's
// live traffic and the saturation of its resources at each step
// (docs/telemetry.md). It only ever sends the probe's queries: no load
// goes to that Prometheus.
package telemetry
