package prober

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/result"
)

// cpuChildEnv makes the test binary, run again by TestGeneratorCPURatio,
// run one ramp and write its result as JSON to the file the variable names.
const cpuChildEnv = "LOADPROBE_CPU_CHILD"

// TestGeneratorCPURatio runs a closed-loop ramp of 1 and 50 connections in a
// child process limited to one core (GOMAXPROCS=1, and taskset -c 1 where it
// exists), against a loopback target in the same process: at 50 connections
// against a route that answers at once the process is busy all the time,
// and the step must read generator_cpu_ratio at or above the 0.9 budget, the
// run generator-limited and not valid. Against a route that sleeps 50ms the
// ratio stays below 0.3 and the run is valid.
func TestGeneratorCPURatio(t *testing.T) {
	if out := os.Getenv(cpuChildEnv); out != "" {
		cpuChild(t, out)
		return
	}
	if testing.Short() {
		t.Skip("runs two ramps in child processes")
	}
	for _, tc := range []struct {
		path    string
		limited bool
	}{
		{"/noop", true},
		{"/delay?ms=50", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, starved := runCPUChild(t, tc.path)
			for _, s := range r.Steps {
				t.Logf("%g connections: generator_cpu_ratio %.2f, goodput %.0f/s, load held %.2f", s.Level, s.GeneratorCPURatio, s.Goodput, s.LoadHeldRatio)
			}
			if len(r.Steps) != 2 {
				t.Fatalf("steps %v, want 2 (%s: %s)", levels(r), r.Ended, r.Error)
			}
			top := r.Steps[1]
			diagnosis := strings.Join(r.Diagnosis, "\n")
			if tc.limited {
				if top.GeneratorCPURatio < 0.9 && starved {
					t.Skipf("the child waited for a core more than a tenth of the time (the machine is busy): its CPU use %.2f says nothing", top.GeneratorCPURatio)
				}
				if top.GeneratorCPURatio < 0.9 || r.Valid || !strings.Contains(diagnosis, "50 connections (generator CPU") || !strings.Contains(diagnosis, "generator-limited at ") {
					t.Errorf("at 50 connections against %s: ratio %.2f, valid %v; want at least 0.9 and a generator-limited, invalid run:\n%s", tc.path, top.GeneratorCPURatio, r.Valid, diagnosis)
				}
				return
			}
			if top.GeneratorCPURatio >= 0.3 || top.GeneratorCPURatio <= 0 || !r.Valid {
				t.Errorf("at 50 connections against %s: ratio %.2f, valid %v; want in (0, 0.3) and valid:\n%s", tc.path, top.GeneratorCPURatio, r.Valid, diagnosis)
			}
		})
	}
}

// runCPUChild runs the ramp against path in a child limited to one core and
// returns its result, and whether the child's threads waited for a core
// more than a tenth of its run.
func runCPUChild(t *testing.T, path string) (result.Result, bool) {
	out := filepath.Join(t.TempDir(), "result.json")
	args := []string{"-test.run=^TestGeneratorCPURatio$", "-test.count=1"}
	name := os.Args[0]
	if taskset, err := exec.LookPath("taskset"); err == nil {
		args = append([]string{"-c", "1", name}, args...)
		name = taskset
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", cpuChildEnv+"="+out, "LOADPROBE_CPU_PATH="+path)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var child struct {
		Result  result.Result
		Starved bool
	}
	if err := json.Unmarshal(b, &child); err != nil {
		t.Fatal(err)
	}
	return child.Result, child.Starved
}

// cpuChild is the child's side: the ramp, and the time its threads spent
// runnable but waiting for a core (Linux schedstat), as the machine's
// other load takes it.
func cpuChild(t *testing.T, out string) {
	url := demoTarget(t, target.Options{}) + os.Getenv("LOADPROBE_CPU_PATH")
	p := probeFor(t, url, `concurrency: [1, 50]
step_duration: 2s`)
	waited0, start := runQueueWait(), time.Now()
	r := mustRun(t, context.Background(), p, Options{})
	waited := runQueueWait() - waited0
	b, err := json.Marshal(struct {
		Result  result.Result
		Starved bool
	}{r, waited > time.Since(start)/10})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runQueueWait sums, over the process's threads, the time they were ready
// to run but waited for a core (the second field of schedstat); 0 where it
// cannot be read.
func runQueueWait() time.Duration {
	tasks, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var sum time.Duration
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(b)); len(fields) >= 2 {
			ns, _ := strconv.ParseInt(fields[1], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}
