package realpart

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// Screenshot has headless Chromium take a PNG of url, checks that it is a
// PNG and not a blank page, and returns it. It is kept in the test's
// artifact directory (go test -artifacts) and, when LOADPROBE_ARTIFACTS
// names a directory, copied there as name, for a reader to look at.
func Screenshot(t *testing.T, url, name string) []byte {
	t.Helper()
	shot := filepath.Join(t.ArtifactDir(), name)
	start := time.Now()
	Chromium(t, "--screenshot="+shot, url)
	t.Logf("chromium --screenshot took %s; screenshot at %s", time.Since(start).Round(time.Millisecond), shot)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG", shot)
	}
	if len(png) < 10<<10 {
		t.Errorf("%s is %d bytes: a blank page?", shot, len(png))
	}
	if dir := os.Getenv("LOADPROBE_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			os.WriteFile(filepath.Join(dir, name), png, 0o644)
		}
	}
	return png
}
