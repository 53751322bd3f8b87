// Package regularfile reads files that loadprobe is given by name (its
// config, request bodies, stored results) safely: only a regular file, and
// only up to a size limit. A device (/dev/zero), a FIFO or a link to either
// is an error at once, never a read that blocks or grows without end.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Read returns the contents of the regular file name (links followed), or
// an error when it is not one or holds more than limit bytes. Errors name
// the file and say what is wrong; a missing file's error satisfies
// errors.Is(err, fs.ErrNotExist).
func Read(name string, limit int64) ([]byte, error) {
	// Stat first: opening a FIFO blocks until a writer comes.
	fi, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cannot read %s: not a regular file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, unwrap(err))
	}
	defer f.Close()
	// Stat again what was opened: the name may have changed in between.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cannot read %s: not a regular file", name)
	}
	return ReadFrom(name, f, limit)
}

// ReadFrom returns what r holds, or an error naming name when it holds
// more than limit bytes: the bound Read puts on a file, for a stream (a
// config on standard input).
func ReadFrom(name string, r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, unwrap(err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("cannot read %s: larger than %s", name, size(limit))
	}
	return data, nil
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
