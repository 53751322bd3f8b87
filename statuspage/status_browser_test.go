package statuspage

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/internal/realpart"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// The page of a probe whose strings hold markup, rendered by headless
// Chromium: the DOM it built has no element and no attribute the strings
// brought in (the injected scripts would have set data-pwned), one whole
// chart, and the strings as text.
func TestStatusPageEscapesInBrowser(t *testing.T) {
	srv := httptest.NewServer(StatusHandler(markup, []Link{{Href: "/metrics", Text: markup}}, evilStates, notPaused))
	t.Cleanup(srv.Close)
	dom := string(realpart.Chromium(t, "--dump-dom", srv.URL+"/"))
	checkEscaped(t, dom)
	if t.Failed() {
		t.Logf("rendered DOM:\n%s", dom)
	}
}

// The chart of a fitted ramp as Chromium renders it: the fitted curve, the
// N* mark and the failed level's column are in the DOM, and a screenshot
// of the page is kept (model.png, see realpart.Screenshot).
func TestModelChartInBrowser(t *testing.T) {
	r := modelled(1, 2, 4, 8, 16, 32, 64, 128)
	states := []state.Probe{{Probe: probe("law", 1, 2, 4, 8, 16, 32, 64, 128), Last: &r}}
	srv := httptest.NewServer(StatusHandler("v", nil, func() []state.Probe { return states }, notPaused))
	t.Cleanup(srv.Close)
	dom := string(realpart.Chromium(t, "--dump-dom", srv.URL+"/"))
	for _, want := range []string{`<polyline class="model" points="`, `<g class="mark peak">`, `>N* 25.4</text>`, `<g class="errors">`, `<p class="model">model: USL σ`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("rendered DOM:\n%s", dom)
	}
	realpart.Screenshot(t, srv.URL+"/", "model.png")
}
