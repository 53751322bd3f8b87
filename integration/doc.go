// Package integration holds loadprobe's end-to-end tests: they build the
// loadprobe binary, run it as the daemon and as the demo target, and check the
// dashboards and rules of dashboards/ against a real Prometheus server that
// scrapes it. The package has no code of its own; see integration_test.go.
package integration
