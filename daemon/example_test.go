package daemon

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/promslog"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// The main example, pointed at a demo target, shows a first breaking point
// within a minute: its first probe, work, takes the host first, and its run
// (with its control's) ends with a breaking point in /api/v1/results and
// on the status page. Until then the page says the others wait for it.
// It asks for no figure, so it runs beside the other tests that ask for
// none (t.Parallel); those that read a knee run alone.
func TestExampleShowsABreakingPointWithinAMinute(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("../examples/loadprobe.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(example), targetURL) {
		t.Fatalf("the example no longer aims at %s, which the test replaces with its demo target", targetURL)
	}
	start := time.Now()
	td := startDaemonWith(t, string(example), daemonOptions{})
	sawWaiting := false
	waiting := regexp.MustCompile(`<td class="state">waiting: 127\.0\.0\.1 is busy with work</td>`)
	var found *result.Result
	for found == nil && time.Since(start) < time.Minute {
		sawWaiting = sawWaiting || waiting.MatchString(td.get(t, "/"))
		for _, r := range td.results(t) {
			bp := r.BreakingPoints
			if r.Ended != result.ResultRunning && r.Name != "canary" && (bp.Knee != nil || bp.LatencyBudget != nil || bp.FirstFailure != nil) {
				found = &r
				break
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	if found == nil {
		t.Fatalf("no run with a breaking point within a minute; results:\n%s", td.get(t, "/api/v1/results"))
	}
	t.Logf("the first breaking point came after %s, from %s", time.Since(start).Round(100*time.Millisecond), found.Name)
	if found.Name != "work" {
		t.Errorf("the first breaking point came from %s, not from work, the first probe of the file", found.Name)
	}
	if !sawWaiting {
		t.Error("no probe's state said it waited for work, which holds the host")
	}
	row := regexp.MustCompile(`(?s)<tr id="row-` + found.Name + `">.*?</tr>`).FindString(td.get(t, "/"))
	if !regexp.MustCompile(`<td class="(knee|latency-budget|first-failure)">[0-9.]+ (connections?|req/s)<div class="sub">goodput `).MatchString(row) {
		t.Errorf("the status page's row of %s shows no breaking point:\n%s", found.Name, row)
	}
}

// At the default log level, a continuous canary's runs leave no line each
// ("Run ended" is at debug; a summary at info once a minute).
func TestContinuousRunsAreNotLoggedOneByOne(t *testing.T) {
	var log bytes.Buffer
	td := startDaemonWith(t, `allowed_targets: ["127.0.0.1"]
probes:
  - name: canary
    request: {url: "http://127.0.0.1:8080/noop"}
    load: {rate: [20], step_duration: 200ms}
    schedule: {continuous: true}
`, daemonOptions{logger: promslog.New(&promslog.Config{Writer: &log})})
	td.waitRun(t, "canary", 5)
	td.stop(t)
	testkit.Contains(t, "the log", log.String(), `msg="Loaded config file"`)
	testkit.Lacks(t, "the log", log.String(), "Run ended")
}
