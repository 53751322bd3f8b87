//go:build !unix

package prober

import "time"

// processCPU cannot be read here: generator_cpu_ratio stays 0 (not measured).
func processCPU() time.Duration { return -1 }
