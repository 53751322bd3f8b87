package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loadprobe/loadprobe/internal/realpart"
	"github.com/loadprobe/loadprobe/internal/testkit"
)

// TestDaemonStartsOverACorruptResultsFileOnReadOnlyStorage starts the
// daemon with --storage.path on a read-only mount (a bind mount in a mount
// namespace of its own, as a read-only volume is) holding a results file
// that is not JSON: the file can be neither read nor moved aside, and the
// daemon starts without it instead of exiting (a crash loop over a cache).
func TestDaemonStartsOverACorruptResultsFileOnReadOnlyStorage(t *testing.T) {
	unshare := realpart.Find(t, "unshare", "apt-get install util-linux")
	storage := t.TempDir()
	corrupt := filepath.Join(storage, "results.json")
	testkit.WriteFile(t, corrupt, `{"probes": [{"result": `)
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, testkit.GoodConfig)
	d := startDaemon(t, exec.Command(unshare, "--map-root-user", "--mount", "sh", "-ec",
		`mount --bind -o ro "$1" "$1"; shift; exec "$@"`, "sh", storage,
		binary, "--config.file="+file, "--storage.path="+storage, "--web.listen-address=127.0.0.1:0"))
	if code, body := d.get(t, "/-/ready"); code != 200 {
		t.Errorf("/-/ready: %d %s, want 200", code, body)
	}
	testkit.Contains(t, "the daemon's log", d.Log(), "Cannot read the kept results, nor set the file aside: starting without them", "read-only file system")
	if b, err := os.ReadFile(corrupt); err != nil || string(b) != `{"probes": [{"result": ` {
		t.Errorf("the corrupt file is now %q (%v), want it left as it was", b, err)
	}
}
