package realpart

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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

// Chromium runs headless Chromium with args after the flags it needs here
// (root, no GPU, a small /dev/shm, no network of its own, a profile of its
// own) and returns its standard output: --dump-dom URL prints the DOM the
// page built, --screenshot=FILE URL writes a PNG.
func Chromium(t testing.TB, args ...string) []byte {
	t.Helper()
	bin := Find(t, "chromium", "apt-get install --no-install-recommends chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--disable-quic", "--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,1000",
	}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}
