// Package integration holds loadprobe's end-to-end tests: they build the
// loadprobe binary, run it as the daemon and as the demo target, and check the
// dashboards and rules of dashboards/ against a real Prometheus server that
// scrapes it: every expression parses, evaluates without error and, where a
// completed ramp must fill it, returns data. The package has no code of its
// own, only tests.
package integration
