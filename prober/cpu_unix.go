//go:build unix

package prober

import (
	"syscall"
	"time"
)

// processCPU is the CPU time, user and system, the process has used so far;
// negative when it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
