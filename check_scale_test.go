package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// TestConfigCheckLinearInProbes checks configs of n and 4n probes with
// --config.check: linear validation takes about four times as long for
// four times the probes, a quadratic one sixteen times (it took 0.9 s at
// 5 000 probes and 18 s at 20 000). The fastest of three checks of each is
// compared, which a busy machine slows alike; the absolute speed is
// BenchmarkParseManyProbes's.
func TestConfigCheckLinearInProbes(t *testing.T) {
	fastest := func(n int) time.Duration {
		file := filepath.Join(t.TempDir(), fmt.Sprintf("probes%d.yml", n))
		testkit.WriteFile(t, file, testkit.ManyProbes(n))
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			if code, stdout, stderr := loadprobe(t, "--config.check", "--config.file="+file); code != 0 {
				t.Fatalf("--config.check of %d probes: exit %d\n%s%s", n, code, stdout, stderr)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := fastest(5000), fastest(20000)
	t.Logf("--config.check: %s for 5 000 probes, %s for 20 000", small, large)
	if ratio := float64(large) / float64(small); ratio > 8 {
		t.Errorf("checking 4x the probes took %.1fx as long (%s, %s): validation is not linear in the number of probes", ratio, small, large)
	}
}
