//go:build unix

package prober

import "syscall"

// fileLimit is the process's file-descriptor limit (the soft
// RLIMIT_NOFILE, which Go's runtime raises to the hard one at start), or 0
// when it cannot be read.
func fileLimit() uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	return uint64(l.Cur)
}
