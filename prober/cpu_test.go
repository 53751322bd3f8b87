package prober

import (
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// costlyTarget answers at once and charges every request cost of the
// generator's CPU, as a generator spends CPU on each request it sends and
// reads: its clock is the process's CPU time the engine watches.
type costlyTarget struct {
	cost time.Duration
	used atomic.Int64
}

func (c *costlyTarget) ServeHTTP(http.ResponseWriter, *http.Request) { c.used.Add(int64(c.cost)) }
func (c *costlyTarget) clock() time.Duration                         { return time.Duration(c.used.Load()) }

// A closed loop of 10 connections on simRTT answers 10/simRTT requests a
// second. A generator that spends 95% of its usable cores there is
// generator-limited: the step reads generator_cpu_ratio at or above the
// 0.9 budget, the run is not valid and says so, while one connection
// stays far below. One that spends a tenth as much is valid.
func TestGeneratorCPURatio(t *testing.T) {
	t.Parallel()
	full := time.Duration(0.95 * usableCores() * float64(simRTT) / 10)
	for _, tc := range []struct {
		name    string
		cost    time.Duration
		limited bool
	}{
		{"busy", full, true},
		{"light", full / 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := &costlyTarget{cost: tc.cost}
			p := probeFor(t, "http://127.0.0.1:1/", "concurrency: [1, 10]\nstep_duration: 2s")
			r := simRun(t, p, Options{cpu: target.clock}, func() http.Handler { return target })
			for _, s := range r.Steps {
				t.Logf("%g connections: generator_cpu_ratio %.2f, goodput %.0f/s", s.Level, s.GeneratorCPURatio, s.Goodput)
			}
			if len(r.Steps) != 2 {
				t.Fatalf("steps %v, want 2 (%s: %s)", levels(r), r.Ended, r.Error)
			}
			one, top := r.Steps[0], r.Steps[1]
			diagnosis := strings.Join(r.Diagnosis, "\n")
			if tc.limited {
				if top.GeneratorCPURatio < 0.9 || one.GeneratorCPURatio > 0.2 || r.Valid ||
					!strings.Contains(diagnosis, "10 connections (generator CPU") || !strings.Contains(diagnosis, "generator-limited at ") {
					t.Errorf("ratio %.2f at 1 connection, %.2f at 10, valid %v; want at most 0.2, then at least 0.9 and a generator-limited, invalid run:\n%s",
						one.GeneratorCPURatio, top.GeneratorCPURatio, r.Valid, diagnosis)
				}
				return
			}
			if top.GeneratorCPURatio >= 0.3 || top.GeneratorCPURatio <= 0 || !r.Valid {
				t.Errorf("ratio %.2f at 10 connections, valid %v; want in (0, 0.3) and valid:\n%s", top.GeneratorCPURatio, r.Valid, diagnosis)
			}
		})
	}
}

// The clock the engine reads by default is the process's CPU time: it
// moves with work done, and a watch over that work reads a share of the
// usable cores.
func TestProcessCPUMovesWithWork(t *testing.T) {
	start := processCPU()
	w := startCPUWatch(processCPU)
	for deadline := time.Now().Add(time.Minute); processCPU()-start < 100*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("a minute of spinning moved the process's CPU time %s", processCPU()-start)
		}
	}
	// Other tests of the package may run beside; no process uses more
	// than its cores.
	if r := w.ratio(); r <= 0 || r > 1.05 {
		t.Errorf("ratio %.2f over a spin, want in (0, 1]", r)
	}
}

// A generator given more Ps than the CPUs it may run on (GOMAXPROCS=2 on
// one pinned core, for the event loops) has no more cores than those CPUs:
// its CPU ratio reaches the budget as its CPUs fill, not at half of them.
func TestUsableCoresAreNoMoreThanTheAffinitys(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.NumCPU() + 1))
	if got := usableCores(); got > float64(runtime.NumCPU()) {
		t.Errorf("usable cores %g with GOMAXPROCS %d on %d CPUs, want at most the CPUs", got, runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
}
