package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// result is a finished soak: what ran, what was sampled, what was found.
type result struct {
	p        params
	date     time.Time
	machine  string
	revision string
	warmup   time.Duration
	samples  []sample
	verdicts []verdict // one per measure, in the order of measures
}

// analyse judges every measure over the samples after the warm-up: a fifth
// of the soak, and at least two schedule intervals, so that every probe
// has run and its series exist.
func analyse(p params, rev string, samples []sample) (result, error) {
	r := result{
		p:        p,
		date:     time.Now().UTC(),
		machine:  machine(),
		revision: rev,
		warmup:   max(p.duration/5, 2*p.scheduleInterval),
		samples:  samples,
	}
	var ts []float64
	for _, s := range samples {
		if s.at >= r.warmup {
			ts = append(ts, s.at.Minutes())
		}
	}
	after := samples[len(samples)-len(ts):]
	for _, m := range measures {
		xs := make([]float64, len(after))
		for i, s := range after {
			xs[i] = m.value(s)
		}
		v, err := judge(ts, xs, m.summary, m.tol)
		if err != nil {
			return r, fmt.Errorf("%s: %w (make the soak longer or sample more often)", m.name, err)
		}
		r.verdicts = append(r.verdicts, v)
	}
	return r, nil
}

func (r result) flat() bool {
	for _, v := range r.verdicts {
		if !v.flat {
			return false
		}
	}
	return true
}

func (r result) print(w io.Writer) {
	fmt.Fprintf(w, "\nafter a warm-up of %v:\n", r.warmup)
	for i, m := range measures {
		fmt.Fprintln(w, verdictLine(m, r.verdicts[i]))
	}
}

// markdown is bench/SOAK.md.
func (r result) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, `# make soak: the daemon's resources over a long run

Written by `+"`make soak`"+` (bench/soak), finished %s.

- loadprobe %s; %s
- %d probes (%s, in turn) on %d demo targets, schedule interval %v, canaries continuous
- sampled every %v for %v; judged after a warm-up of %v: a measure is flat when the
  median of its last third of samples is at most the median of its first third plus the
  tolerance (goroutines 20 + 10%%, RSS 8 MiB + 10%%, heap in use 4 MiB + 10%%, open fds
  8 + 10%%); series when
  their peak in the last third is at most their peak in the first (a run clears its step
  series and rebuilds them step by step: between runs the count is back at its level)

## Verdicts

`, r.date.Format(time.RFC3339), r.revision, r.machine, r.p.probes, kindNames(), r.p.hosts,
		r.p.scheduleInterval, r.p.every, r.p.duration, r.warmup)
	for i, m := range measures {
		fmt.Fprintf(&b, "- %s\n", verdictLine(m, r.verdicts[i]))
	}
	b.WriteString("\n## Samples\n\n| " + strings.Join(columns(), " | ") + " |\n|" + strings.Repeat("---:|", len(columns())) + "\n")
	for _, s := range r.samples {
		cells := cells(s)
		if s.at < r.warmup {
			cells[0] += " (warm-up)"
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

func verdictLine(m measure, v verdict) string {
	word := "flat"
	if !v.flat {
		word = "NOT FLAT"
	}
	return fmt.Sprintf("%s: %s (%s %s in the first third, %s in the last, +%s allowed; slope %s)",
		m.name, word, m.summary.name, m.format(v.first), m.format(v.last), m.format(v.allowed), m.formatSlope(v.slopePerMin))
}

// columns are the heads of the samples table: time, the measures, and
// the runs ended so far (how much the daemon did).
func columns() []string {
	cols := []string{"time"}
	for _, m := range measures {
		cols = append(cols, m.name)
	}
	return append(cols, "runs ended")
}

func cells(s sample) []string {
	cells := []string{s.at.String()}
	for _, m := range measures {
		cells = append(cells, m.format(m.value(s)))
	}
	return append(cells, fmt.Sprintf("%.0f", s.runs))
}

// printRow prints a row of the samples table on the terminal.
func printRow(w io.Writer, cells []string) {
	for _, c := range cells {
		fmt.Fprintf(w, "%12s", c)
	}
	fmt.Fprintln(w)
}

func kindNames() string {
	names := make([]string, len(probeKinds))
	for i, k := range probeKinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// machine says what the soak ran on; the load average tells how busy the
// (shared) machine was.
func machine() string {
	m := fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	if load, err := os.ReadFile("/proc/loadavg"); err == nil && len(strings.Fields(string(load))) >= 3 {
		m += ", load average " + strings.Join(strings.Fields(string(load))[:3], " ") + " at the end"
	}
	return m
}

// revision is the commit the soak builds, read before it builds: a commit
// made during a long soak is not the one measured.
func revision() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "(revision unknown)"
	}
	return strings.TrimSpace(string(out))
}
