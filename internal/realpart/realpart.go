// Package realpart finds the real programs the tests run beside loadprobe
// (Prometheus, promtool, Chromium). `make test` installs them; when one is
// missing, a test skips on a developer's machine and fails under CI=true,
// where a skip would pass a run whose real part never ran.
package realpart

import (
	"os"
	"os/exec"
	"testing"
)

// Find returns the path of the program name; install says how to get it.
func Find(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed and CI=true: %s (make test does)", name, install)
	}
	t.Skipf("%s is not installed (%s); CI=true makes this fatal", name, install)
	return ""
}
