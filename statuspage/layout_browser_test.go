package statuspage

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/realpart"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// measureScript, added to the page by the test alone (the page has no
// script), writes where the browser laid out every cell of the probes'
// table, and how wide the document is, into the DOM that --dump-dom prints.
const measureScript = `<script>
const vw = document.documentElement.clientWidth, sw = document.documentElement.scrollWidth;
const rows = [];
document.querySelectorAll("body > table.probes tr > *").forEach(c => {
  const r = c.getBoundingClientRect();
  rows.push([c.tagName, Math.floor(r.left), Math.ceil(r.right), c.className || "-"].join(" "));
});
const pre = document.createElement("pre");
pre.id = "layout"; pre.dataset.viewport = vw; pre.dataset.scroll = sw;
pre.textContent = rows.join("\n");
document.body.appendChild(pre);
</script>`

func withScript(h http.Handler, script string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := strings.Replace(rec.Body.String(), "</body>", script+"</body>", 1)
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.Write([]byte(body))
	})
}

// widePage is the widest table the page draws: long levels with brackets,
// a long waiting state, an aborted run; and a history chart.
func widePage() []state.Probe {
	now := time.Now()
	ramp := finished("work-concurrency", now.Add(-3*time.Hour))
	big := func(lv, below, good float64) *result.Point {
		return &result.Point{Level: lv, Throughput: good, Bracket: [2]float64{below, lv}}
	}
	ramp.BreakingPoints = result.BreakingPoints{Knee: big(1024, 512, 12345), LatencyBudget: big(2048, 1024, 12400), FirstFailure: big(4096, 2048, 11000)}
	ramp.Capacity = big(2048, 1024, 12400)
	ramp.Valid = false
	rate := finished("work-rate-limited", now.Add(-50*time.Minute))
	rate.Mode = plan.ModeRate
	rate.Ended, rate.Abort = result.ResultAborted, &result.Abort{By: result.ByLive, Guard: "error_ratio", Value: 0.6, Level: 20000}
	rate.BreakingPoints = result.BreakingPoints{Knee: big(12500, 10000, 12480.5), LatencyBudget: big(15000, 12500, 12400), FirstFailure: big(20000, 15000, 9000)}
	rate.Capacity = big(12500, 10000, 12480.5)
	rp := probe("work-rate-limited")
	rp.Load.Concurrency, rp.Load.Rate = nil, []float64{5000, 10000, 12500, 15000, 20000}
	rp.Expect.MinCapacity = 100000
	return []state.Probe{
		{Probe: probe("work-concurrency", 1, 2, 4), Last: ramp, History: runsOf(now, 12000, 12400, 12345), Waiting: true, WaitingFor: "127.0.0.1 is busy with canary-on-the-same-host (continuous)"},
		{Probe: rp, Last: rate, Current: &result.Result{Name: "work-rate-limited", Steps: []result.Step{{Level: 1}}}},
		{Probe: probe("fresh", 1, 2), Waiting: true, WaitingFor: "max_concurrency 4096: 4000 connections in use, 256 needed"},
	}
}

var layoutRow = regexp.MustCompile(`^(TH|TD) (-?\d+) (-?\d+) (.*)$`)

// At 900 and 1400 pixels wide, every column of the probes' table lies
// within the window, CAPACITY and VALID included, and nothing on the page
// is wider than the window.
func TestStatusTableFitsTheWindow(t *testing.T) {
	srv := httptest.NewServer(withScript(StatusHandler("version devel · go1.26", []Link{{Href: "/metrics", Text: "Metrics"}}, widePage, notPaused), measureScript))
	t.Cleanup(srv.Close)
	for _, width := range []int{900, 1400} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			dom := string(realpart.Chromium(t, fmt.Sprintf("--window-size=%d,1000", width), "--dump-dom", srv.URL+"/"))
			m := regexp.MustCompile(`<pre id="layout" data-viewport="(\d+)" data-scroll="(\d+)">([^<]*)</pre>`).FindStringSubmatch(dom)
			if m == nil {
				t.Fatalf("the measuring script left nothing:\n%s", dom)
			}
			viewport, _ := strconv.Atoi(m[1])
			scroll, _ := strconv.Atoi(m[2])
			if viewport != width {
				t.Fatalf("the window is %d pixels wide, want %d", viewport, width)
			}
			if scroll > viewport {
				t.Errorf("the page is %d pixels wide in a window of %d: something is cut", scroll, viewport)
			}
			cells, headers := 0, []string{}
			for _, line := range strings.Split(strings.TrimSpace(m[3]), "\n") {
				c := layoutRow.FindStringSubmatch(line)
				if c == nil {
					t.Fatalf("layout line %q", line)
				}
				left, _ := strconv.Atoi(c[2])
				right, _ := strconv.Atoi(c[3])
				cells++
				if c[1] == "TH" {
					headers = append(headers, c[4])
				}
				if left < 0 || right > viewport {
					t.Errorf("%s %s spans %d to %d, outside the window's 0 to %d", c[1], c[4], left, right, viewport)
				}
			}
			if len(headers) != len(columns) || cells < 3*len(columns) {
				t.Errorf("%d headers and %d cells measured, want %d headers and the rows", len(headers), cells, len(columns))
			}
			if t.Failed() {
				shot := filepath.Join(t.ArtifactDir(), fmt.Sprintf("layout-%d.png", width))
				realpart.Chromium(t, fmt.Sprintf("--window-size=%d,1000", width), "--screenshot="+shot, srv.URL+"/")
				t.Logf("layout:\n%s\nscreenshot at %s", m[3], shot)
			}
		})
	}
}
