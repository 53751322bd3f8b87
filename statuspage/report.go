package statuspage

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// Run is one probe's run for a report.
type Run struct {
	Probe  *plan.Probe
	Result result.Result
}

// reportProbe is a run as the report shows it: the page's view of it, and
// its steps as rows.
type reportProbe struct {
	probeView
	Unit string // the first column's heading: "connections", "req/s"
	Rows []reportRow
}

// reportRow is a step: its figures as text, in the order of the headings.
type reportRow struct {
	Cells []string
	Codes string
}

// Report writes runs as one self-contained HTML page, to attach where a
// file is read offline (a pull request, a ticket): each probe's breaking
// points, capacity, chart, model, diagnosis and steps, with the status
// page's styles and charts inline and nothing fetched
// (docs/commands.md, "Command line").
func Report(w io.Writer, version string, runs []Run) error {
	view := struct {
		Version string
		Columns []column
		Probes  []reportProbe
	}{Version: version, Columns: columns}
	for _, run := range runs {
		r := run.Result
		v := newProbeView(state.Probe{Probe: run.Probe, Last: &r}, time.Now(), false)
		rp := reportProbe{probeView: v, Unit: v.Words.Unit()}
		if r.Mode == plan.ModePhases {
			rp.Unit = "phase"
		}
		lq, _ := analysis.LatencyRule(run.Probe.Rules)
		order := newLevelAxis(r).order(r.Steps)
		for _, i := range order {
			rp.Rows = append(rp.Rows, newReportRow(r.Steps[i], r.Mode, lq))
		}
		view.Probes = append(view.Probes, rp)
	}
	return page.ExecuteTemplate(w, "report.html", view)
}

func newReportRow(s result.Step, mode plan.Mode, lq result.Quantile) reportRow {
	row := reportRow{Cells: []string{plan.FormatLevel(s.Level), fmt.Sprintf("%.1f", s.Throughput), fmt.Sprintf("%.1f", s.Goodput)}}
	if mode == plan.ModePhases {
		row.Cells[0] = s.Name
	}
	latencies := []float64{s.Latency.Mean, s.Latency.P50, s.Latency.P90, lq.Of(s.Latency)}
	for _, l := range latencies {
		if s.Succeeded() == 0 {
			row.Cells = append(row.Cells, "-") // no successful response to measure
			continue
		}
		row.Cells = append(row.Cells, seconds(l))
	}
	row.Cells = append(row.Cells, fmt.Sprintf("%.2f%%", 100*s.ErrorRatio))
	var codes []string
	for _, c := range []string{result.Counts(s.Responses.Named()), result.Counts(s.Errors)} {
		if c != "-" {
			codes = append(codes, c)
		}
	}
	row.Codes = cmp.Or(strings.Join(codes, " "), "-")
	return row
}
