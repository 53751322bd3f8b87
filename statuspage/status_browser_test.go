package statuspage

import (
	"net/http/httptest"
	"testing"

	"github.com/loadprobe/loadprobe/internal/realpart"
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
