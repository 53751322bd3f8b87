// Package realpart finds and runs the real programs the tests use beside
// loadprobe (Prometheus, promtool, Chromium); it is imported by tests only.
// `make test` installs the programs; when one is missing, a test skips on a
// developer's machine and fails under CI=true, where a skip would pass a run
// whose real part never ran.
package realpart
