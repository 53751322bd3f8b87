package daemon

import (
	"os"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// A results save that fails is counted, not only logged: the storage
// directory removed under a running daemon makes its next save fail, and
// loadprobe_storage_save_failures_total says so.
func TestStorageSaveFailuresAreCounted(t *testing.T) {
	dir := t.TempDir()
	td := startDaemonWith(t, testkit.GoodConfig, daemonOptions{storage: dir})
	testkit.Contains(t, "/metrics", td.get(t, "/metrics"), "loadprobe_storage_save_failures_total 0")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	td.waitRun(t, "work", 1)
	testkit.WaitFor(t, "a failed save counted", func() bool {
		return testkit.MetricValue(t, td.get(t, "/metrics"), "loadprobe_storage_save_failures_total") >= 1
	})
}
