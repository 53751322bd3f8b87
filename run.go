package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/daemon"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/internal/finitejson"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/statuspage"
)

// Exit codes of `loadprobe run`.
const (
	exitOK       = 0
	exitExpect   = 1 // a probe's expectation did not hold, or its run failed
	exitUsageErr = 2 // a usage or config error
)

// runOnce is `loadprobe run`: it runs the selected probes (all when none is
// named) one after the other, each followed by its control as the daemon
// runs them (prober.Runner.WithControl), and prints their results on
// stdout. Progress goes to stderr. When ctx ends, the run under way ends
// canceled within seconds and is printed; the probes after it do not run.
// With a shard of a fleet, each run sends the shard's share of its levels;
// with fl, this process is a replica of a one-shot fleet (runfleet.go).
func runOnce(ctx context.Context, source probeSource, names []string, output string, shard fleet.Shard, fl *oneShot, stdout, stderr io.Writer) int {
	if output != "table" && output != "json" && output != "html" {
		fmt.Fprintf(stderr, "loadprobe run: --output must be table, json or html, not %q\n", output)
		return exitUsageErr
	}
	cfg, file, err := source.load()
	if err == nil {
		err = cfg.CheckShard(file, shard, fl != nil)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsageErr
	}
	probes, err := selectProbes(cfg, names)
	if err != nil {
		fmt.Fprintf(stderr, "loadprobe run: %v\n", err)
		return exitUsageErr
	}
	for _, n := range prober.FileNeeds(probes, shard) {
		fmt.Fprintln(stderr, "warning:", n)
	}
	// Every attempt is recorded in the live metrics too, as in the daemon,
	// though nobody scrapes this registry (but a one-shot fleet's
	// Prometheus): a one-off run then pays the same per-request cost as a
	// scheduled one, and `make bench` measures the generator as it runs in
	// production, not a lighter one.
	reg := prometheus.NewRegistry()
	coll := collector.New(reg)
	var align time.Time
	if fl != nil {
		stop, err := fl.serve(reg, probes, cfg.Hash())
		if err == nil {
			defer stop()
			align, err = fl.gather(ctx, stderr)
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitExpect
		}
	}
	results := runProbes(ctx, cfg, probes, coll, shard, fl, align, stderr)
	shown, code := results, exitOK
	if fl != nil {
		fl.finish(ctx, probes, results)
		shown, code = make([]result.Result, len(results)), fl.code(probes, results)
		for i, r := range results {
			shown[i] = fleetView(r)
		}
	} else {
		for i, r := range results {
			if !expectationsHold(probes[i], r) {
				code = exitExpect
			}
		}
	}
	return printRuns(stdout, stderr, output, reg, probes, results, shown, code)
}

// runProbes runs probes one after the other, each followed by its
// control; on a replica of a one-shot fleet, each at its turn from align.
func runProbes(ctx context.Context, cfg *config.Config, probes []*plan.Probe, coll *collector.Collector, shard fleet.Shard, fl *oneShot, align time.Time, stderr io.Writer) []result.Result {
	progress := newProgressPrinter(stderr)
	results := make([]result.Result, 0, len(probes))
	run := prober.Runner(prober.Run)
	for i, p := range probes {
		fmt.Fprintf(stderr, "probe %s: %s\n", p.Name, prober.ClientPath(p))
		opts := prober.Options{Live: coll.Live(p.Name), Progress: progress.print, Shard: shard}
		var control *prober.Control
		var controlLoad *plan.Load
		if p.Control != "" { // looked up only when named: most probes have none
			if c, ok := cfg.Plan(p.Control); ok {
				controlLoad = &c.Load
				control = &prober.Control{Probe: c, Options: prober.Options{Live: coll.Live(c.Name), Progress: progress.print, Shard: shard}}
			}
		}
		if fl != nil {
			opts.Align, opts.Fleet, opts.FleetSteps = align, fl.prom, fl.reader
			opts.OnStep = func(partial result.Result) { fl.results.set(i, partial, true) }
			if control != nil {
				control.Options.Align, control.Options.Fleet = fleet.ControlStart(align, p.Load), fl.prom
			}
			// The next probe's run starts on the first boundary after
			// this one's and its control's.
			align = fleet.Boundary(align.Add(fleet.PairLength(p.Load, controlLoad)), fleetGrid)
		}
		r := run.WithControl(ctx, p, opts, control)
		progress.done()
		if fl != nil {
			fl.results.set(i, r, false)
		}
		results = append(results, r)
		if ctx.Err() != nil {
			break
		}
	}
	return results
}

// printRuns prints the runs in output's format, shown as the table's (a
// one-shot fleet's replica 0 shows its fleet's), and returns code, or 1
// when they could not be written.
func printRuns(stdout, stderr io.Writer, output string, reg *prometheus.Registry, probes []*plan.Probe, results, shown []result.Result, code int) int {
	var err error
	switch output {
	case "json":
		err = finitejson.WriteIndented(stdout, struct {
			Probes []result.Result `json:"probes"`
		}{results})
	case "html":
		runs := make([]statuspage.Run, len(results))
		for i, r := range results {
			runs[i] = statuspage.Run{Probe: probes[i], Result: r}
		}
		err = statuspage.Report(stdout, daemon.VersionText(), runs)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitExpect
	}
	tables := stdout
	if output != "table" {
		// A one-shot fleet's replica 0 shows the fleet's table in its log too.
		if !slices.ContainsFunc(results, func(r result.Result) bool { return r.Fleet != nil }) {
			return code
		}
		tables = stderr
	}
	for i, r := range shown {
		if i > 0 {
			fmt.Fprintln(tables)
		}
		if f := results[i].Fleet; f != nil {
			fmt.Fprintf(tables, "fleet of %d replicas (%d found at every level), summed in Prometheus:\n", f.Shards, f.Replicas)
		}
		writeTable(tables, probes[i], r, closeCodes(reg, r.Name))
	}
	return code
}

// selectProbes returns the named probes in the order first given, each
// once however often it is named, or all.
func selectProbes(cfg *config.Config, names []string) ([]*plan.Probe, error) {
	if len(names) == 0 {
		return cfg.Plans(), nil
	}
	var ps []*plan.Probe
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		p, ok := cfg.Plan(n)
		if !ok {
			return nil, fmt.Errorf("no probe named %q in the config", n)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// writeTable prints one run as the ramp table, its breaking points,
// capacity, validity, model and diagnosis. Latency columns are over successful responses;
// the http_error responses' own p99 gets a column when any step had one.
// closed is a WebSocket probe's close codes over the run ("" when none).
func writeTable(w io.Writer, p *plan.Probe, r result.Result, closed string) {
	wd := wordsFor(p, r)
	lq, budget := analysis.LatencyRule(p.Rules)
	fmt.Fprintf(w, "probe %s: %s, %s in %.1fs\n", r.Name, p.Load.Kind(), r.Ended, r.DurationSeconds)
	if r.Error != "" {
		fmt.Fprintf(w, "  %s\n", r.Error)
	}
	if !slices.ContainsFunc(r.Steps, func(s result.Step) bool { return s.Attempts > 0 }) {
		fmt.Fprintln(w, "no load was sent: no levels, breaking points or capacity to show")
		return
	}
	writeSteps(w, r, lq, wd)
	writeCandidate(w, p, r, lq, wd)
	if closed != "" {
		fmt.Fprintf(w, "close codes: %s (sessions the server closed, over the run)\n", closed)
	}
	writeFlowSteps(w, r, lq)

	fmt.Fprintln(w, "breaking points:")
	why := map[result.Rule]string{
		result.RuleKnee:          fmt.Sprintf("first level at %g%% of the %.1f/s peak", 100*p.Rules.KneeFraction, r.PeakThroughput),
		result.RuleLatencyBudget: fmt.Sprintf("first level whose %s of successes exceeds %s", lq.Label, time.Duration(budget*float64(time.Second))),
		result.RuleFirstFailure:  firstFailureRule(p.Rules.ErrorRatioBudget),
	}
	for _, rule := range result.Rules {
		pt := r.BreakingPoints.Of(rule)
		switch {
		case pt == nil && r.ReachedUpTo > 0:
			fmt.Fprintf(w, "  %-15s not reached up to %s (%s)\n", rule.Text(), wd.Level(r.ReachedUpTo), why[rule])
		case pt == nil:
			fmt.Fprintf(w, "  %-15s never (%s)\n", rule.Text(), why[rule])
		case pt.Bracket[1] > 0:
			fmt.Fprintf(w, "  %-15s %s, bracket [%s, %s], goodput %.1f/s (%s)\n", rule.Text(), wd.Level(pt.Level),
				plan.FormatLevel(pt.Bracket[0]), plan.FormatLevel(pt.Bracket[1]), pt.Throughput, why[rule])
		default:
			fmt.Fprintf(w, "  %-15s %s, goodput %.1f/s (%s)\n", rule.Text(), wd.Level(pt.Level), pt.Throughput, why[rule])
		}
	}
	if r.Capacity != nil {
		fmt.Fprintf(w, "capacity: %.1f/s at %s (the highest goodput within the budgets", r.Capacity.Throughput, wd.Level(r.Capacity.Level))
		if r.FallsPastPeak {
			fmt.Fprint(w, "; goodput falls past it")
		}
		fmt.Fprint(w, ")")
	} else {
		fmt.Fprint(w, "capacity: none (no level was within the budgets)")
	}
	if l := r.Limiter; l != nil {
		fmt.Fprintf(w, "; a limiter passes about %.1f/s (%s)", l.Throughput, l.Code)
	}
	expected := expectations(p, r)
	for _, x := range expected {
		if x.got == "" {
			fmt.Fprintf(w, "; %s: %s", x.text, verdict(x, r))
		}
	}
	fmt.Fprintln(w)
	for _, x := range expected {
		if x.got != "" {
			fmt.Fprintf(w, "%s: %s, %s\n", x.text, x.got, verdict(x, r))
		}
	}
	writePastCapacity(w, r, wd)
	valid := "yes"
	if !r.Valid {
		valid = "no"
	}
	fmt.Fprintf(w, "valid: %s\n", valid)
	if line := analysis.ModelLine(r.Model, r.Words()); line != "" {
		fmt.Fprintf(w, "model: %s\n", line)
	}
	for _, d := range r.Diagnosis {
		fmt.Fprintf(w, "  - %s\n", d)
	}
}

// writeCandidate prints the steps of a candidate measured beside r, and
// the verdict on it.
func writeCandidate(w io.Writer, p *plan.Probe, r result.Result, lq result.Quantile, wd words) {
	c := r.Compare
	if c == nil || c.Candidate == nil {
		return
	}
	title := "candidate " + p.Candidate.URL.Host
	fmt.Fprintf(w, "%s, at the same levels, in turn with the baseline:\n", title)
	writeSteps(w, *c.Candidate, lq, wd)
	writeComparison(w, title, r, *c.Candidate, c, *p.Compare)
}

// writePastCapacity prints what the run says beyond its capacity: how the
// target served past it and recovered, what ran out, and the headroom
// over its live traffic.
func writePastCapacity(w io.Writer, r result.Result, wd words) {
	if o := r.Overload; o != nil {
		recovered := "did not recover within settle_timeout"
		if o.RecoverySeconds != nil {
			recovered = fmt.Sprintf("recovered in %.1fs", *o.RecoverySeconds)
		}
		fmt.Fprintf(w, "overload: %s (goodput past capacity kept %.0f%% of it at worst; %s)\n", o.Grade, 100*o.GoodputRetained, recovered)
	}
	if b := r.Bottleneck; b != nil {
		fmt.Fprintf(w, "bottleneck: %s, at its limit from %s (read %.3g)\n", b.Resource, wd.Level(b.Level), b.Value)
	}
	if h := r.Headroom; h != nil {
		fmt.Fprintf(w, "headroom: %.2f× (capacity %.1f/s over a live peak of %.1f/s in the last %s; %.1f/s now)\n",
			h.Ratio, h.Capacity, h.LivePeak, h.Window, h.LiveNow)
	}
}

// writeSteps prints one row per step. A search's rows are in order of
// level, each with its place in the run and what it was measured for.
func writeSteps(w io.Writer, r result.Result, lq result.Quantile, wd words) {
	withErrors := slices.ContainsFunc(r.Steps, func(s result.Step) bool { return s.ErrorLatency != nil })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := wd.Unit()
	if r.Mode == plan.ModePhases {
		first = "phase"
	}
	errCol := ""
	if withErrors {
		errCol = "error " + lq.Label + "\t"
	}
	order := make([]int, len(r.Steps))
	for i := range order {
		order[i] = i
	}
	searchCols := ""
	if r.Searched() {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.Steps[a].Level, r.Steps[b].Level) })
		searchCols = "step\tsearch\t"
	}
	quantiles := latencyColumns(lq)
	latHeads := ""
	for _, q := range quantiles {
		latHeads += q.Label + "\t"
	}
	resources := saturated(r.Steps)
	fmt.Fprintf(tw, "%s%s\t%s\tgoodput\tmean\t%s%serror ratio\t%s\terrors\tin-flight\tload held\tgen cpu\t%s\n",
		searchCols, first, wd.throughput(), latHeads, errCol, wd.codes(), columns(resources))
	for _, i := range order {
		s := r.Steps[i]
		if searchCols != "" {
			fmt.Fprintf(tw, "%d\t%s\t", i+1, s.Search)
		}
		lvl := plan.FormatLevel(s.Level)
		if s.Name != "" {
			lvl = s.Name
		}
		if s.Cut {
			lvl += " (cut)" // its figures cover the part before the stop
		}
		errLat := ""
		switch {
		case !withErrors:
		case s.ErrorLatency == nil:
			errLat = "-\t"
		default:
			errLat = ms(lq.Of(*s.ErrorLatency)) + "\t"
		}
		mean, lat := ms(s.Latency.Mean), ""
		for _, q := range quantiles {
			lat += ms(q.Of(s.Latency)) + "\t"
		}
		if s.Succeeded() == 0 {
			// No successful response to measure.
			mean, lat = "-", strings.Repeat("-\t", len(quantiles))
		}
		cpu := fmt.Sprintf("%.0f%%", 100*s.GeneratorCPURatio)
		if s.OverlappingRuns > 0 {
			cpu += fmt.Sprintf(" +%d runs", s.OverlappingRuns) // other runs' load overlapped the step
		}
		read := make([]string, len(resources))
		for j, name := range resources {
			read[j] = "-"
			if v, ok := s.Saturation[name]; ok {
				read[j] = strconv.FormatFloat(v, 'g', 3, 64)
			}
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%s\t%s%s%.2f%%\t%s\t%s\t%.1f\t%.0f%%\t%s\t%s\n",
			lvl, s.Throughput, s.Goodput, mean, lat, errLat, 100*s.ErrorRatio,
			wd.responses(s.Responses), result.Counts(s.Errors), s.InFlight, 100*s.LoadHeldRatio, cpu, columns(read))
	}
	tw.Flush()
}

// saturated names the resources the steps read, in order of name: the
// table's columns after its own.
func saturated(steps []result.Step) []string {
	var names []string
	for _, s := range steps {
		for name := range s.Saturation {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// columns writes cells of a tab-aligned row, each closed by its tab.
func columns(cells []string) string {
	var b strings.Builder
	for _, c := range cells {
		b.WriteString(c + "\t")
	}
	return b.String()
}

// latencyColumns are the quantiles the table shows: p50 and p90, as wrk's
// --latency does, and the one the latency rule judges (p99 unless set).
func latencyColumns(rule result.Quantile) []result.Quantile {
	cols := []result.Quantile{result.Quantiles[0], result.Quantiles[1]}
	if rule.Q > cols[1].Q {
		cols = append(cols, rule)
	}
	return cols
}

func firstFailureRule(budget float64) string {
	if budget == 0 {
		return "first level with a failed attempt"
	}
	return "first level whose error ratio exceeds " + plainNumber(budget)
}

// plainNumber writes a configured figure as a user wrote it, never in
// exponent form: 1000000, 0.00001, 95.
func plainNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ms formats seconds as milliseconds for the table.
func ms(seconds float64) string {
	return strconv.FormatFloat(seconds*1000, 'f', 2, 64) + "ms"
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
	level := plan.FormatLevel(pr.Level)
	if pr.Name != "" {
		level = pr.Name
	}
	line := fmt.Sprintf("%s: step %d/%d (level %s), %s elapsed, ~%s left, %d requests",
		pr.Probe, pr.Step, pr.Steps, level, pr.Elapsed.Round(time.Second), pr.Remaining.Round(time.Second), pr.Requests)
	if pr.Search != "" {
		line = fmt.Sprintf("%s: step %d of at most %d (%s), level %s, %s elapsed, at most %s left, %d requests",
			pr.Probe, pr.Step, pr.Steps, pr.Search, level, pr.Elapsed.Round(time.Second), pr.Remaining.Round(time.Second), pr.Requests)
	}
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
