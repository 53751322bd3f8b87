package statuspage

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/schedule/state"
)

//go:embed status.html report.html style.html chart.html history.html
var files embed.FS

var page = template.Must(template.New("status.html").Funcs(template.FuncMap{
	"point": pointCell,
	"rate":  rate,
	"ratio": func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) },
	"ago":   ago,
	"dur":   durationText,
	"c":     coord,
}).ParseFS(files, "status.html", "report.html", "style.html", "chart.html", "history.html"))

// column is a column of the probes' table with what it means, which its
// header's title and the notes under the table say
// (docs/commands.md, "The status page").
type column struct{ Name, Class, Note string }

var columns = []column{
	{Name: "probe", Note: ""},
	{Name: "state", Note: ""},
	{Name: "last run", Note: ""},
	{Name: "knee", Class: "knee", Note: "the first level whose goodput reaches the knee fraction (0.95 unless set) of the run's peak: where adding load stopped adding throughput; with telemetry, the bottleneck: the first declared resource at its limit"},
	{Name: "latency budget exceeded at", Class: "latency-budget", Note: "the first level whose latency quantile (p99 unless set) exceeds the latency budget (200ms unless set)"},
	{Name: "first failure", Class: "first-failure", Note: "the first level with a failed attempt, or with an error ratio above the error ratio budget; \"not reached\" names the highest level a rule that did not fire was measured up to"},
	{Name: "capacity", Class: "capacity", Note: "the highest goodput among the levels within the latency and error budgets, at the lowest of them within 3% of it: the number capacity alerts follow; under it, how the target served past it (overload graceful, degraded or collapse) and, with telemetry, the headroom: capacity over the target's live peak"},
	{Name: "valid", Class: "valid", Note: "yes when every level below the first failure held its load, no step was generator-limited (loadprobe's own CPU at its budget, or another run's load beside it) and the control probe did not flag the generator; no: the figures may be loadprobe's limits, not the target's"},
}

// Link is an entry of the page's header.
type Link struct{ Href, Text string }

// StatusHandler serves the status page from the probes' states at request time.
// paused says whether the pause switch holds all load.
func StatusHandler(version string, links []Link, states func() []state.Probe, paused func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		now := time.Now()
		view := struct {
			Version string
			Links   []Link
			Now     time.Time
			Columns []column
			Probes  []probeView
			Paused  bool
		}{Version: version, Links: links, Now: now, Columns: columns, Paused: paused()}
		for _, st := range states() {
			view.Probes = append(view.Probes, newProbeView(st, now, view.Paused))
		}
		var b strings.Builder
		if err := page.Execute(&b, view); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, b.String())
	})
}

// probeView is one probe as the page shows it.
type probeView struct {
	Name, State string
	Words       plan.Words // what its levels count
	Kind        string     // what the load is, e.g. "concurrency search"
	Last        *result.Result
	// Charted is the run the chart shows: the last one, or the first run
	// still under way once it has a step.
	Charted      *result.Result
	ChartCaption string
	Chart        *chartView
	// ModelLine is the charted run's scalability model in one line (empty
	// without one: a phases profile, or a run under way).
	ModelLine string
	// History is the probe's stored runs as a chart; nil with fewer than
	// two, without a store, and for a continuous probe.
	History     *historyView
	Quantile    string  // the latency quantile the rules judge, e.g. "p99"
	Budget      string  // the latency budget, e.g. "200ms"
	MinCapacity float64 // expect.min_capacity; 0 when unset
	BelowMin    bool    // the last run's capacity is below MinCapacity
}

func newProbeView(st state.Probe, now time.Time, paused bool) probeView {
	p := st.Probe
	lq, budget := analysis.LatencyRule(p.Rules)
	words := p.Words()
	v := probeView{
		Name: p.Name, Words: words, Kind: p.Load.Kind(), Last: st.Last,
		Quantile: lq.Label, Budget: seconds(budget),
		MinCapacity: p.Expect.MinCapacity,
	}
	switch {
	case paused && st.Current == nil:
		v.State = "paused"
	case st.Current != nil && p.Load.Search != nil:
		v.State = fmt.Sprintf("running, step %d of at most %d", min(len(st.Current.Steps)+1, steps(p.Load)), steps(p.Load))
		if st.Doing != "" {
			v.State += " (" + st.Doing + ")"
		}
	case st.Current != nil:
		v.State = fmt.Sprintf("running, step %d of %d", min(len(st.Current.Steps)+1, steps(p.Load)), steps(p.Load))
	case st.Waiting && st.WaitingFor != "":
		v.State = "waiting: " + st.WaitingFor
	case st.Waiting:
		v.State = "waiting for its host or the caps"
	case p.Schedule.Continuous:
		v.State = "idle (continuous)"
	case !st.Next.IsZero():
		v.State = "idle, next in " + coarse(st.Next.Sub(now))
	default:
		v.State = "idle"
	}
	if l := st.Last; l != nil && v.MinCapacity > 0 {
		v.BelowMin = l.Capacity == nil || l.Capacity.Throughput < v.MinCapacity
	}
	switch {
	case st.Last != nil && len(st.Last.Steps) > 0:
		v.Charted, v.ChartCaption = st.Last, "last run"
	case st.Current != nil && len(st.Current.Steps) > 0:
		v.Charted, v.ChartCaption = st.Current, "run under way"
	}
	if !p.Schedule.Continuous {
		v.History = history(p.Name, words, st.History, st.Change, now)
	}
	if v.Charted != nil {
		v.Chart = chart(*v.Charted, p.Rules)
		v.ModelLine = analysis.ModelLine(v.Charted.Model, v.Charted.Words())
	}
	return v
}

// steps is how many steps a run of l has, at most for a search.
func steps(l plan.Load) int {
	if l.Search != nil {
		return l.Search.MaxSteps
	}
	switch l.Mode() {
	case plan.ModeRate:
		return len(l.Rate)
	case plan.ModePhases:
		return len(l.Phases)
	default:
		return len(l.Concurrency)
	}
}

func axisTitle(words plan.Words) string {
	switch words.Mode {
	case plan.ModeConcurrency:
		return "level (" + words.Unit() + ")"
	case plan.ModePhases:
		return "phase"
	default:
		return "offered rate (" + words.Unit() + ")"
	}
}

// pointView is a breaking point or a capacity as a cell shows it: the
// level, and under it the figures that go with it, each named.
type pointView struct {
	Level string
	Notes []string
}

// pointCell shows p, or for a rule that did not fire the highest level the
// run measured it up to (reachedUpTo; 0 for a capacity), as run's table does.
func pointCell(p *result.Point, reachedUpTo float64, words plan.Words) pointView {
	switch {
	case p == nil && reachedUpTo > 0:
		return pointView{Level: "not reached", Notes: []string{"up to " + words.Level(reachedUpTo)}}
	case p == nil:
		return pointView{Level: "—"}
	}
	v := pointView{Level: words.Level(p.Level), Notes: []string{"goodput " + rate(p.Throughput) + "/s"}}
	if p.Bracket[1] > 0 {
		v.Notes = append(v.Notes, "bracket ["+plan.FormatLevel(p.Bracket[0])+", "+plan.FormatLevel(p.Bracket[1])+"]")
	}
	return v
}

// rate formats a throughput: whole numbers from 10/s up, else two digits.
func rate(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

func ago(now, t time.Time) string {
	return durationText(now.Sub(t).Seconds()) + " ago"
}

// durationText is a duration in seconds as people read it: 850ms, 4s, 2m5s, 1h3m.
func durationText(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	default:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
}

// coarse is a wait as a schedule reads: 45s, 59m, 2h5m.
func coarse(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return d.Round(time.Second).String()
	case d < 2*time.Hour:
		return strconv.Itoa(int(d.Round(time.Minute).Minutes())) + "m"
	default:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
}

func seconds(v float64) string {
	d := time.Duration(v * float64(time.Second))
	switch {
	case d >= time.Second:
		d = d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		d = d.Round(10 * time.Microsecond)
	}
	return d.String()
}
