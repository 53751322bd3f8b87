package prober

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// cpuWatch measures the process's CPU use over a step's load as a share of
// the CPU it may use in that time (generator_cpu_ratio; docs/measurement.md,
// "The generator watches itself"). The process is the generator: a target
// served by the same process (the demo's) counts too, as it takes the same
// cores.
type cpuWatch struct {
	clock func() time.Duration // the process's CPU time so far; negative: not measurable
	cpu   time.Duration        // at the start
	wall  time.Time
	cores float64 // usableCores at the start
}

func startCPUWatch(clock func() time.Duration) cpuWatch {
	return cpuWatch{clock: clock, cpu: clock(), wall: time.Now(), cores: usableCores()}
}

// ratio is the CPU time used since the start over the wall time elapsed ×
// the usable cores; 0 when it cannot be measured.
func (w cpuWatch) ratio() float64 {
	r, _ := w.lap()
	return r
}

// lap is ratio, and the watch started again from now on the same cores,
// for a caller that looks again and again without reading the cgroup
// each time.
func (w cpuWatch) lap() (float64, cpuWatch) {
	next := cpuWatch{clock: w.clock, cpu: w.clock(), wall: time.Now(), cores: w.cores}
	wall := next.wall.Sub(w.wall)
	if w.cpu < 0 || next.cpu < 0 || wall <= 0 {
		return 0, next
	}
	return (next.cpu - w.cpu).Seconds() / (wall.Seconds() * w.cores), next
}

// usableCores is the CPU the process may use: GOMAXPROCS (which follows the
// CPU affinity and, since Go 1.25, the cgroup limit), no more than the CPUs
// of its affinity (GOMAXPROCS=2 on one pinned core: docs/measurement.md,
// "The open loop's event loops"), and no more than the cgroup v2 quota
// when one is set.
func usableCores() float64 {
	cores := float64(min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
	if q, ok := cgroupQuota(); ok {
		cores = min(cores, q)
	}
	return cores
}

// cgroupQuota reads the cores the process's cgroup v2 allows it
// ("quota period" in cpu.max); false when it has no quota, or none can
// be read.
func cgroupQuota() (float64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup" + cgroupPath() + "/cpu.max")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || quota <= 0 || period <= 0 {
		return 0, false
	}
	return quota / period, true
}

// cgroupPath is the process's cgroup v2 path ("0::/path" in
// /proc/self/cgroup), "" when it has none.
func cgroupPath() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && p != "/" {
			return p
		}
	}
	return ""
}
