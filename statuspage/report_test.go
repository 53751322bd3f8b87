package statuspage

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/loadprobe/loadprobe/internal/realpart"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// report writes the report of a fitted ramp of 1 to 128 connections
// (model.png's run) to a file, as `run --output=html > report.html` does.
func report(t *testing.T) (file, text string) {
	t.Helper()
	r := modelled(1, 2, 4, 8, 16, 32, 64, 128)
	var b strings.Builder
	if err := Report(&b, "version 1.2.3", []Run{{Probe: probe("law", 1, 2, 4, 8, 16, 32, 64, 128), Result: r}}); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(t.TempDir(), "report.html")
	testkit.WriteFile(t, file, b.String())
	return file, b.String()
}

// The report holds the run's breaking points, capacity, chart, model,
// diagnosis and one row per step, and fetches nothing: no script, no
// stylesheet or image by URL, no link to follow for its content.
func TestReportIsOneSelfContainedPage(t *testing.T) {
	_, text := report(t)
	testkit.Contains(t, "the report", text,
		`<title>loadprobe run: law</title>`, "version 1.2.3",
		`<td class="knee">`, `<td class="capacity">`, `<svg class="ramp"`, `<polyline class="model"`,
		`<p class="model">model: USL σ`, `<ul class="diagnosis">`, "<th>p50</th><th>p90</th><th>p99</th>",
	)
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "img", "iframe", "object":
				t.Errorf("the report has a <%s>: it must hold everything itself", n.Data)
			case "tr":
				if n.Parent != nil && n.Parent.Parent != nil && hasClass(n.Parent.Parent, "steps") && n.Parent.Data == "tbody" {
					rows++
				}
			}
			for _, a := range n.Attr {
				if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q>: the report fetches or links to something", n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if rows != 8 {
		t.Errorf("%d step rows, want 8 (1 to 128 connections)", rows)
	}
	if regexp.MustCompile(`url\(|@import`).MatchString(text) {
		t.Error("the report's styles fetch something")
	}
}

func hasClass(n *html.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && strings.Contains(" "+a.Val+" ", " "+class+" ") {
			return true
		}
	}
	return false
}

// A probe's strings reach the report as text, never as markup.
func TestReportEscapes(t *testing.T) {
	states := evilStates()
	var b strings.Builder
	if err := Report(&b, markup, []Run{{Probe: states[0].Probe, Result: *states[0].Last}}); err != nil {
		t.Fatal(err)
	}
	checkEscaped(t, b.String())
}

// Headless Chromium renders the report from a file, with no server: the
// chart, its model and the steps are in the DOM it built, and a screenshot
// is kept (report.png, as docs/report.png shows a real run's).
func TestReportInBrowser(t *testing.T) {
	file, _ := report(t)
	dom := string(realpart.Chromium(t, "--dump-dom", "file://"+file))
	for _, want := range []string{`<svg class="ramp"`, `<polyline class="model" points="`, `<g class="mark peak">`, `<table class="steps">`, `<td class="knee">`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered report lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("rendered DOM:\n%s", dom)
	}
	realpart.Screenshot(t, "file://"+file, "report.png")
}

// A run that failed before any load (a method reflection could not
// resolve) is reported with its reason, and no chart or step.
func TestReportOfAFailedRun(t *testing.T) {
	r := result.Result{Name: "failed", Mode: plan.ModeConcurrency, Ended: result.ResultFailed, Started: time.Now(),
		Error: "grpc method a.B/C: the server does not serve reflection", Steps: []result.Step{}}
	var b strings.Builder
	if err := Report(&b, "v", []Run{{Probe: probe("failed", 1, 2), Result: r}}); err != nil {
		t.Fatal(err)
	}
	testkit.Contains(t, "the report", b.String(), `<h2>failed <span class="muted">· concurrency ramp, failed in`, `<p class="error">grpc method a.B/C: the server does not serve reflection</p>`)
	testkit.Lacks(t, "the report", b.String(), `<svg class="ramp"`, "<td>1</td>")
}
