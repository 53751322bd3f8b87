package regularfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zeroLink); err != nil {
		t.Fatal(err)
	}
	smallLink := filepath.Join(dir, "link")
	if err := os.Symlink(small, smallLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		limit      int64
		want       string // contents, or the end of the error
	}{
		{"regular", small, 5, "hello"},
		{"link to a regular file", smallLink, 5, "hello"},
		{"over the limit", small, 4, small + ": larger than 4 bytes"},
		{"device", "/dev/zero", 1 << 20, "/dev/zero: not a regular file"},
		{"link to a device", zeroLink, 1 << 20, zeroLink + ": not a regular file"},
		{"fifo", fifo, 1 << 20, fifo + ": not a regular file"},
		{"directory", dir, 1 << 20, dir + ": not a regular file"},
		{"missing", filepath.Join(dir, "nope"), 1, filepath.Join(dir, "nope") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Read(tc.file, tc.limit)
			if err != nil {
				if want := "cannot read " + tc.want; err.Error() != want {
					t.Errorf("got error %q, want %q", err, want)
				}
				return
			}
			if string(data) != tc.want {
				t.Errorf("got %q, want %q", data, tc.want)
			}
		})
	}
	if _, err := Read(filepath.Join(dir, "nope"), 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file's error %v is not fs.ErrNotExist", err)
	}
}
