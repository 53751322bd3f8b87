// Package web serves loadprobe's status page: every probe's state and last
// breaking points, with a chart of its last ramp, from the binary alone.
package web

import (
	"embed"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/prober"
)

//go:embed status.html
var files embed.FS

var page = template.Must(template.New("status.html").Funcs(template.FuncMap{
	"point": pointText,
	"ago":   ago,
}).ParseFS(files, "status.html"))

// Link is an entry of the page's header.
type Link struct{ Href, Text string }

// StatusHandler serves the status page from the probes' states at request time.
func StatusHandler(version string, links []Link, states func() []prober.ProbeState) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		view := struct {
			Version string
			Links   []Link
			Now     time.Time
			Probes  []probeView
		}{Version: version, Links: links, Now: time.Now()}
		for _, st := range states() {
			view.Probes = append(view.Probes, newProbeView(st))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := page.Execute(w, view); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
}

// probeView is one probe as the page shows it.
type probeView struct {
	Name, Mode, State, Unit string
	Last                    *prober.Result
	Chart                   template.HTML
}

func newProbeView(st prober.ProbeState) probeView {
	v := probeView{Name: st.Probe.Name, Mode: st.Probe.Load.Mode(), Last: st.Last, State: "idle", Unit: unit(st.Probe.Load.Mode())}
	if c := st.Current; c != nil {
		v.State = fmt.Sprintf("running (%d steps done)", len(c.Steps))
	}
	if st.Last != nil {
		v.Chart = chart(*st.Last, st.Probe.Rules, v.Unit)
	}
	return v
}

func unit(mode string) string {
	if mode == config.ModeConcurrency {
		return "connections"
	}
	return "req/s"
}

func pointText(p *prober.Point, unit string) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%g %s (%.0f/s)", p.Level, unit, p.Throughput)
}

func ago(now, t time.Time) string {
	return now.Sub(t).Round(time.Second).String() + " ago"
}

// The chart's frame, in SVG user units.
const (
	chartW, chartH = 640.0, 260.0
	padL, padR     = 56.0, 64.0
	padT, padB     = 16.0, 44.0
)

// chart draws a run's ramp as inline SVG: goodput (left axis) and the
// latency quantile of the rules (right axis) against level, one level per
// equal step along x (ramps usually double), with the three breaking points
// marked by vertical lines.
func chart(r prober.Result, rules config.Rules, unit string) template.HTML {
	if len(r.Steps) == 0 {
		return ""
	}
	n := len(r.Steps)
	x := func(i int) float64 {
		if n == 1 {
			return padL + (chartW-padL-padR)/2
		}
		return padL + float64(i)*(chartW-padL-padR)/float64(n-1)
	}
	maxGood, maxLat := 0.0, 0.0
	for _, s := range r.Steps {
		maxGood = math.Max(maxGood, s.Goodput)
		maxLat = math.Max(maxLat, s.Latency.P99)
	}
	maxGood = niceCeil(maxGood)
	maxLat = niceCeil(maxLat)
	plotH := chartH - padT - padB
	yGood := func(v float64) float64 { return padT + plotH*(1-v/maxGood) }
	yLat := func(v float64) float64 { return padT + plotH*(1-v/maxLat) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="ramp" viewBox="0 0 %g %g" role="img" aria-label="goodput and p99 against level for %s">`, chartW, chartH, template.HTMLEscapeString(r.Name))
	// Axes and their labels.
	fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="%g" x2="%g" y2="%g"/>`, padL, chartH-padB, chartW-padR, chartH-padB)
	fmt.Fprintf(&b, `<text class="good" x="%g" y="%g" text-anchor="end">%s/s</text>`, padL-6, padT+4, short(maxGood))
	fmt.Fprintf(&b, `<text class="good" x="%g" y="%g" text-anchor="end">0</text>`, padL-6, chartH-padB)
	fmt.Fprintf(&b, `<text class="lat" x="%g" y="%g">%s</text>`, chartW-padR+6, padT+4, seconds(maxLat))
	fmt.Fprintf(&b, `<text class="lat" x="%g" y="%g">0</text>`, chartW-padR+6, chartH-padB)
	for i, s := range r.Steps {
		label := strconv.FormatFloat(s.Level, 'f', -1, 64)
		if s.Name != "" {
			label = s.Name
		}
		fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g" text-anchor="middle">%s</text>`, x(i), chartH-padB+16, template.HTMLEscapeString(label))
	}
	fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g" text-anchor="middle">level (%s)</text>`, (padL+chartW-padR)/2, chartH-6, unit)

	// Breaking points under the curves.
	marks := []struct {
		class, label string
		p            *prober.Point
	}{
		{"knee", "knee", r.BreakingPoints.Knee},
		{"budget", "latency budget", r.BreakingPoints.LatencyBudget},
		{"failure", "first failure", r.BreakingPoints.FirstFailure},
	}
	for k, m := range marks {
		if m.p == nil {
			continue
		}
		for i, s := range r.Steps {
			if s.Level == m.p.Level {
				fmt.Fprintf(&b, `<g class="mark %s"><line x1="%g" y1="%g" x2="%g" y2="%g"/><text x="%g" y="%g">%s</text></g>`,
					m.class, x(i), padT, x(i), chartH-padB, x(i)+4, padT+12+float64(k)*12, m.label)
				break
			}
		}
	}
	line := func(class string, y func(float64) float64, v func(prober.Step) float64) {
		var pts []string
		for i, s := range r.Steps {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v(s))))
		}
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, class, strings.Join(pts, " "))
		for i, s := range r.Steps {
			fmt.Fprintf(&b, `<circle class="%s" cx="%.1f" cy="%.1f" r="3"><title>%g: %s</title></circle>`,
				class, x(i), y(v(s)), s.Level, pointTitle(class, v(s)))
		}
	}
	line("good", yGood, func(s prober.Step) float64 { return s.Goodput })
	line("lat", yLat, func(s prober.Step) float64 { return s.Latency.P99 })
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func pointTitle(class string, v float64) string {
	if class == "lat" {
		return "p99 " + seconds(v)
	}
	return fmt.Sprintf("goodput %.1f/s", v)
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so axis tops
// read as round numbers.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func short(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func seconds(v float64) string {
	return time.Duration(v * float64(time.Second)).Round(10 * time.Microsecond).String()
}
