package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadprobe/loadprobe/prober/result"
	"github.com/loadprobe/loadprobe/prober/schedule"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/prober"
)

// Exit codes of `loadprobe run`.
const (
	exitOK       = 0
	exitExpect   = 1 // a probe's expectation did not hold, or its run failed
	exitUsageErr = 2 // a usage or config error
)

// runOnce is `loadprobe run`: it runs the selected probes (all when none is
// named) one after the other, each followed by its control, and prints their
// results on stdout. Progress goes to stderr. With a shard of a fleet, each
// run sends the shard's share of its levels.
func runOnce(ctx context.Context, configFile string, names []string, output string, shard prober.Shard, stdout, stderr io.Writer) int {
	if output != "table" && output != "json" {
		fmt.Fprintf(stderr, "loadprobe run: --output must be table or json, not %q\n", output)
		return exitUsageErr
	}
	cfg, err := config.LoadFile(configFile)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsageErr
	}
	probes, err := selectProbes(cfg, names)
	if err != nil {
		fmt.Fprintf(stderr, "loadprobe run: %v\n", err)
		return exitUsageErr
	}
	progress := newProgressPrinter(stderr)
	// Every attempt is recorded in the live metrics too, as in the daemon,
	// though nobody scrapes this registry: a one-off run then pays the same
	// per-request cost as a scheduled one, and `make bench` measures the
	// generator as it runs in production, not a lighter one.
	coll := collector.New(prometheus.NewRegistry(), noSource{})
	results := make([]result.Result, 0, len(probes))
	for _, p := range probes {
		r := prober.Run(ctx, p, prober.Options{Live: coll.Live(p.Name), Progress: progress.print, Shard: shard})
		if c, ok := cfg.Probe(p.Control); ok && p.Control != "" && ctx.Err() == nil {
			result.MarkControl(&r, prober.Run(ctx, c, prober.Options{Live: coll.Live(c.Name), Progress: progress.print, Shard: shard}))
		}
		progress.done()
		results = append(results, r)
		if ctx.Err() != nil {
			break
		}
	}

	code := exitOK
	for i, r := range results {
		if !expectationsHold(probes[i], r) {
			code = exitExpect
		}
	}
	if output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Probes []result.Result `json:"probes"`
		}{results}); err != nil {
			fmt.Fprintln(stderr, err)
			return exitExpect
		}
		return code
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		writeTable(stdout, probes[i], r)
	}
	return code
}

// noSource is the collector.Source of `loadprobe run`: its results go to
// stdout, not to per-step series.
type noSource struct{}

func (noSource) Snapshot() []schedule.ProbeState { return nil }

// selectProbes returns the named probes in the order given, or all.
func selectProbes(cfg *config.Config, names []string) ([]config.Probe, error) {
	if len(names) == 0 {
		return cfg.Probes, nil
	}
	var ps []config.Probe
	for _, n := range names {
		p, ok := cfg.Probe(n)
		if !ok {
			return nil, fmt.Errorf("no probe named %q in the config", n)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// expectationsHold says whether a run did what its probe's expect asks:
// it completed (or stopped escalating on its abort rule) and, when
// min_capacity is set, its capacity reached it.
func expectationsHold(p config.Probe, r result.Result) bool {
	if r.Result != result.ResultCompleted && r.Result != result.ResultAborted {
		return false
	}
	if p.Expect.MinCapacity > 0 {
		return r.Capacity != nil && r.Capacity.Throughput >= p.Expect.MinCapacity
	}
	return true
}

// levelUnit names a level of the probe's load in the table.
func levelUnit(mode string) string {
	if mode == config.ModeConcurrency {
		return "conns"
	}
	return "req/s"
}

// writeTable prints one run as the ramp table, its breaking points,
// capacity and diagnosis.
func writeTable(w io.Writer, p config.Probe, r result.Result) {
	unit := levelUnit(r.Mode)
	fmt.Fprintf(w, "probe %s: %s ramp, %s in %.1fs\n", r.Name, r.Mode, r.Result, r.DurationSeconds)
	if r.Error != "" {
		fmt.Fprintf(w, "  %s\n", r.Error)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := unit
	if r.Mode == config.ModePhases {
		first = "phase"
	}
	fmt.Fprintf(tw, "%s\trps\tgoodput\tmean\tp99\terror ratio\tcodes\terrors\tin-flight\t\n", first)
	for _, s := range r.Steps {
		lvl := strconv.FormatFloat(s.Level, 'f', -1, 64)
		if s.Name != "" {
			lvl = s.Name
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%s\t%s\t%.2f%%\t%s\t%s\t%.1f\t\n",
			lvl, s.Throughput, s.Goodput, ms(s.Latency.Mean), ms(s.Latency.P99), 100*s.ErrorRatio,
			counts(s.Responses), counts(s.Errors), s.InFlight)
	}
	tw.Flush()

	fmt.Fprintln(w, "breaking points:")
	point := func(label, rule string, pt *result.Point) {
		if pt == nil {
			fmt.Fprintf(w, "  %-15s never (%s)\n", label, rule)
			return
		}
		fmt.Fprintf(w, "  %-15s %g %s, goodput %.1f/s (%s)\n", label, pt.Level, unit, pt.Throughput, rule)
	}
	rules := p.Rules
	point("knee", fmt.Sprintf("first level at %g%% of the %.1f/s peak", 100*rules.KneeFraction, r.PeakThroughput), r.BreakingPoints.Knee)
	point("latency budget", fmt.Sprintf("first level whose p%g exceeds %s", 100*rules.LatencyQuantile, time.Duration(rules.LatencyBudget)), r.BreakingPoints.LatencyBudget)
	point("first failure", firstFailureRule(rules.ErrorRatioBudget), r.BreakingPoints.FirstFailure)
	if r.Capacity != nil {
		fmt.Fprintf(w, "capacity: %.1f/s at %g %s", r.Capacity.Throughput, r.Capacity.Level, unit)
	} else {
		fmt.Fprint(w, "capacity: none (no level was within the budgets)")
	}
	if p.Expect.MinCapacity > 0 {
		verdict := "met"
		if !expectationsHold(p, r) {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "; expected at least %g/s: %s", p.Expect.MinCapacity, verdict)
	}
	fmt.Fprintln(w)
	valid := "yes"
	if !r.Valid {
		valid = "no"
	}
	fmt.Fprintf(w, "valid: %s\n", valid)
	for _, d := range r.Diagnosis {
		fmt.Fprintf(w, "  - %s\n", d)
	}
}

func firstFailureRule(budget float64) string {
	if budget == 0 {
		return "first level with a failed attempt"
	}
	return fmt.Sprintf("first level whose error ratio exceeds %g", budget)
}

// ms formats seconds as milliseconds for the table.
func ms(seconds float64) string {
	return strconv.FormatFloat(seconds*1000, 'f', 2, 64) + "ms"
}

// counts formats a by-code or by-reason map as "200:490 503:12", sorted.
func counts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "-"
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, " ")
}

// progressPrinter shows a run's progress on stderr: one line rewritten in
// place on a terminal, a line per step otherwise (logs, CI).
type progressPrinter struct {
	w        io.Writer
	terminal bool
	lastStep string
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	p := &progressPrinter{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil {
			p.terminal = fi.Mode()&os.ModeCharDevice != 0
		}
	}
	return p
}

func (p *progressPrinter) print(pr prober.Progress) {
	level := strconv.FormatFloat(pr.Level, 'f', -1, 64)
	if pr.Name != "" {
		level = pr.Name
	}
	line := fmt.Sprintf("%s: step %d/%d (level %s), %s elapsed, ~%s left, %d requests",
		pr.Probe, pr.Step, pr.Steps, level, pr.Elapsed.Round(time.Second), pr.Remaining.Round(time.Second), pr.Requests)
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	step := pr.Probe + "/" + strconv.Itoa(pr.Step)
	if step != p.lastStep {
		p.lastStep = step
		fmt.Fprintln(p.w, line)
	}
}

func (p *progressPrinter) done() {
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	p.lastStep = ""
}
