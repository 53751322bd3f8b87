package statuspage

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// A search runs its levels out of order: the page draws them in order of
// level, shades each breaking point's bracket, and says what the step under
// way is for.
func TestStatusPageDrawsASearchInOrderOfLevel(t *testing.T) {
	p := probe("searched")
	p.Load = plan.Load{Search: &plan.Search{Concurrency: &plan.SearchRange{From: 1, Max: 256}, Precision: 0.1, MaxSteps: 24}}
	r := &result.Result{Name: "searched", Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Started: time.Now(), Valid: true}
	for _, lv := range []float64{1, 2, 4, 8, 16, 32, 12, 10, 11} {
		good := 50 * min(lv, 12)
		r.Steps = append(r.Steps, result.Step{Level: lv, Goodput: good, Throughput: good, Attempts: 100,
			Latency: result.Latency{P99: 0.02 * max(1, lv/12)}, Search: result.SearchGrow})
	}
	analysis.Analyze(r, p.Rules)
	current := &result.Result{Name: "searched", Mode: plan.ModeConcurrency, Steps: r.Steps[:6]}
	states := []state.Probe{
		{Probe: p, Last: r},
		{Probe: p, Current: current, Doing: "refining the knee between 8 and 16"},
	}
	_, body := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")

	testkit.Contains(t, "the page", body,
		`<td class="knee">12 connections<div class="sub">goodput 600/s</div><div class="sub">bracket [11, 12]</div></td>`,
		`running, step 7 of at most 24 (refining the knee between 8 and 16)`,
		// A search is named a search, not by its axis alone.
		`<div class="sub">concurrency search</div>`, `last run, concurrency search,`,
		// Past capacity (12) goodput holds at 600/s: graceful.
		`<div class="sub overload graceful">overload graceful</div>`,
		`<rect class="bracket knee"`, `<title>knee between 11 and 12 connections</title>`,
	)
	svg := body[strings.Index(body, "<svg"):]
	svg = svg[:strings.Index(svg, "</svg>")]
	var ticks []string
	for _, m := range regexp.MustCompile(`<text class="tick" [^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		ticks = append(ticks, m[1])
	}
	// The axis is proportional (log for a doubling ramp): 11 stands too
	// close to 10 and 12 for a label of its own, and keeps its tick mark.
	if got := strings.Join(ticks, " "); got != "1 2 4 8 10  12 16 32" {
		t.Errorf("the chart's levels read %q, want them in order of level", got)
	}
}
