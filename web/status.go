// Package web serves loadprobe's status page: every probe's state and last
// breaking points, with a chart of its last ramp, from the binary alone
// (inline SVG, no script, nothing fetched from elsewhere).
package web

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/prober/result"
	"github.com/loadprobe/loadprobe/prober/schedule"

	"github.com/loadprobe/loadprobe/config"
)

//go:embed status.html
var files embed.FS

var page = template.Must(template.New("status.html").Funcs(template.FuncMap{
	"point": pointText,
	"ago":   ago,
	"dur":   durationText,
}).ParseFS(files, "status.html"))

// Link is an entry of the page's header.
type Link struct{ Href, Text string }

// StatusHandler serves the status page from the probes' states at request time.
func StatusHandler(version string, links []Link, states func() []schedule.ProbeState) http.Handler {
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
			Probes  []probeView
		}{Version: version, Links: links, Now: now}
		for _, st := range states() {
			view.Probes = append(view.Probes, newProbeView(st, now))
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
	Name, State, Unit string
	Mode              result.Mode
	Last              *result.Result
	// Charted is the run the chart shows: the last one, or the first run
	// still under way once it has a step.
	Charted      *result.Result
	ChartCaption string
	Chart        template.HTML
	Quantile     string  // the latency quantile the rules judge, e.g. "p99"
	Budget       string  // the latency budget, e.g. "200ms"
	MinCapacity  float64 // expect.min_capacity; 0 when unset
	BelowMin     bool    // the last run's capacity is below MinCapacity
}

func newProbeView(st schedule.ProbeState, now time.Time) probeView {
	p := st.Probe
	lq, budget := result.LatencyRule(p.Rules)
	mode := result.ModeOf(p.Load)
	v := probeView{
		Name: p.Name, Mode: mode, Last: st.Last, Unit: mode.Unit(),
		Quantile: lq.Label, Budget: seconds(budget),
		MinCapacity: p.Expect.MinCapacity,
	}
	switch {
	case st.Current != nil:
		v.State = fmt.Sprintf("running, step %d of %d", min(len(st.Current.Steps)+1, steps(p.Load)), steps(p.Load))
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
	if v.Charted != nil {
		v.Chart = chart(*v.Charted, p.Rules, v.Unit)
	}
	return v
}

// steps is how many steps a run of l has.
func steps(l config.Load) int {
	switch l.Mode() {
	case config.ModeRate:
		return len(l.Rate)
	case config.ModePhases:
		return len(l.Phases)
	default:
		return len(l.Concurrency)
	}
}

func axisTitle(mode result.Mode, unit string) string {
	switch mode {
	case result.Concurrency:
		return "level (" + unit + ")"
	case result.Phases:
		return "phase"
	default:
		return "offered rate (" + unit + ")"
	}
}

func pointText(p *result.Point, unit string) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%s %s (%s/s)", result.FormatLevel(p.Level), unit, rate(p.Throughput))
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

// The chart's frame, in SVG user units.
const (
	chartW, chartH = 720.0, 330.0
	padL, padR     = 66.0, 74.0
	padT, padB     = 46.0, 50.0
	plotW, plotH   = chartW - padL - padR, chartH - padT - padB
	divisions      = 4 // horizontal grid lines above 0, shared by both axes
)

// chart draws a run's ramp as inline SVG: goodput (left axis) and the
// latency quantile of the rules (right axis) against level, one level per
// equal step along x (ramps usually double), with the three breaking points
// marked by vertical lines, the latency budget by a horizontal one and the
// capacity by a ring on the goodput curve.
func chart(r result.Result, rules config.Rules, unit string) template.HTML {
	if len(r.Steps) == 0 {
		return ""
	}
	lq, budget := result.LatencyRule(rules)
	n := len(r.Steps)
	x := func(i int) float64 {
		if n == 1 {
			return padL + plotW/2
		}
		return padL + float64(i)*plotW/float64(n-1)
	}
	maxGood, maxLat := 0.0, 0.0
	for _, s := range r.Steps {
		maxGood = math.Max(maxGood, s.Goodput)
		maxLat = math.Max(maxLat, lq.Of(s.Latency))
	}
	goodStep, latStep := niceStep(maxGood/divisions), niceStep(maxLat/divisions)
	goodTop, latTop := goodStep*divisions, latStep*divisions
	yGood := func(v float64) float64 { return padT + plotH*(1-v/goodTop) }
	yLat := func(v float64) float64 { return padT + plotH*(1-v/latTop) }
	esc := template.HTMLEscapeString

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="ramp" viewBox="0 0 %g %g" role="img" aria-label="goodput and %s latency against level for %s">`,
		chartW, chartH, lq.Label, esc(r.Name))
	fmt.Fprintf(&b, `<rect class="plot" x="%g" y="%g" width="%g" height="%g"/>`, padL, padT, plotW, plotH)

	// Grid and both value axes: one grid line per division, labelled with
	// goodput on the left and latency on the right.
	for i := 0; i <= divisions; i++ {
		y := padT + plotH*(1-float64(i)/divisions)
		class := "grid"
		if i == 0 {
			class = "axis"
		}
		fmt.Fprintf(&b, `<line class="%s" x1="%g" y1="%.1f" x2="%g" y2="%.1f"/>`, class, padL, y, chartW-padR, y)
		fmt.Fprintf(&b, `<text class="good" x="%g" y="%.1f" text-anchor="end">%s</text>`, padL-8, y+4, tick(goodStep*float64(i)))
		fmt.Fprintf(&b, `<text class="lat" x="%g" y="%.1f">%s</text>`, chartW-padR+8, y+4, latTick(latStep*float64(i)))
	}
	fmt.Fprintf(&b, `<text class="good title" transform="translate(14 %g) rotate(-90)" text-anchor="middle">goodput (req/s)</text>`, padT+plotH/2)
	fmt.Fprintf(&b, `<text class="lat title" transform="translate(%g %g) rotate(90)" text-anchor="middle">%s latency</text>`, chartW-12, padT+plotH/2, lq.Label)

	// The level axis.
	for i, s := range r.Steps {
		label := result.FormatLevel(s.Level)
		if s.Name != "" {
			label = s.Name
		}
		fmt.Fprintf(&b, `<line class="tickmark" x1="%.1f" y1="%g" x2="%.1f" y2="%g"/>`, x(i), padT+plotH, x(i), padT+plotH+5)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%g" text-anchor="middle">%s</text>`, x(i), padT+plotH+19, esc(label))
	}
	fmt.Fprintf(&b, `<text class="tick title" x="%g" y="%g" text-anchor="middle">%s</text>`, padL+plotW/2, chartH-8, esc(axisTitle(r.Mode, unit)))

	// The latency budget, when it is within the latency axis.
	if budget > 0 && budget <= latTop {
		y := yLat(budget)
		fmt.Fprintf(&b, `<g class="budget-line"><line x1="%g" y1="%.1f" x2="%g" y2="%.1f"/><text x="%g" y="%.1f" text-anchor="end">%s budget</text></g>`,
			padL, y, chartW-padR, y, chartW-padR-4, y-4, seconds(budget))
	}

	// Breaking points, under the curves; their labels above the plot, one
	// row per rule so that neighbours never overlap.
	marks := []struct {
		class, label string
		p            *result.Point
	}{
		{"knee", result.RuleKnee.Text(), r.BreakingPoints.Knee},
		{"budget", result.RuleLatencyBudget.Text(), r.BreakingPoints.LatencyBudget},
		{"failure", result.RuleFirstFailure.Text(), r.BreakingPoints.FirstFailure},
	}
	for k, m := range marks {
		if m.p == nil {
			continue
		}
		for i, s := range r.Steps {
			if s.Level != m.p.Level {
				continue
			}
			anchor, tx := "middle", x(i)
			switch {
			case tx-padL < 50:
				anchor, tx = "start", tx-4
			case chartW-padR-tx < 50:
				anchor, tx = "end", tx+4
			}
			fmt.Fprintf(&b, `<g class="mark %s"><line x1="%.1f" y1="%g" x2="%.1f" y2="%g"/><text x="%.1f" y="%g" text-anchor="%s">%s</text></g>`,
				m.class, x(i), padT-float64(2-k)*13-4, x(i), padT+plotH, tx, padT-float64(2-k)*13-8, anchor, m.label)
			break
		}
	}

	line := func(class string, y func(float64) float64, v func(result.Step) float64, title func(float64) string) {
		pts := make([]string, 0, n)
		for i, s := range r.Steps {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v(s))))
		}
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, class, strings.Join(pts, " "))
		for i, s := range r.Steps {
			fmt.Fprintf(&b, `<circle class="%s" cx="%.1f" cy="%.1f" r="3.5"><title>%s %s: %s</title></circle>`,
				class, x(i), y(v(s)), result.FormatLevel(s.Level), esc(unit), title(v(s)))
		}
	}
	line("good", yGood, func(s result.Step) float64 { return s.Goodput }, func(v float64) string { return "goodput " + rate(v) + "/s" })
	line("lat", yLat, func(s result.Step) float64 { return lq.Of(s.Latency) }, func(v float64) string { return lq.Label + " " + seconds(v) })

	if c := r.Capacity; c != nil {
		for i, s := range r.Steps {
			if s.Level == c.Level {
				fmt.Fprintf(&b, `<circle class="capacity" cx="%.1f" cy="%.1f" r="8"><title>capacity %s/s at %s %s</title></circle>`,
					x(i), yGood(s.Goodput), rate(c.Throughput), result.FormatLevel(c.Level), esc(unit))
				break
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceStep rounds v up to a grid step people read at a glance: 1, 2, 2.5,
// 3, 4, 5, 6 or 8 times a power of ten.
func niceStep(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 0.25
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 3, 4, 5, 6, 8} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func tick(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func latTick(v float64) string {
	if v == 0 {
		return "0"
	}
	return seconds(v)
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
