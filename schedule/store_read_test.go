package schedule

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A results file that is not a regular file (a link to /dev/zero, a FIFO)
// is an error at once, which the scheduler sets aside: the daemon neither
// hangs nor grows reading it.
func TestStoreLoadRefusesFilesThatAreNotRegular(t *testing.T) {
	for name, create := range map[string]func(path string) error{
		"link to /dev/zero": func(path string) error { return os.Symlink("/dev/zero", path) },
		"fifo":              func(path string) error { return syscall.Mkfifo(path, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := NewStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "results.json")
			if err := create(path); err != nil {
				t.Fatal(err)
			}
			want := "cannot read " + path + ": not a regular file"
			if states, err := store.Load(); err == nil || err.Error() != want {
				t.Errorf("Load() = %v, %v; want the error %q", states, err, want)
			}
		})
	}
}
