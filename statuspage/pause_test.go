package statuspage

import (
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

func notPaused() bool { return false }

func TestStatusPageShowsThePauseAndWhatStoppedARun(t *testing.T) {
	now := time.Now()
	stopped := finished("work", now.Add(-time.Minute))
	stopped.Ended = result.ResultAborted
	stopped.Abort = &result.Abort{By: result.ByPrometheus, Guard: "target_5xx", Value: 42, Level: 8, AtSeconds: 12}
	states := []state.Probe{{Probe: probe("work", 1, 2, 4, 8, 16), Last: stopped}}
	for _, paused := range []bool{false, true} {
		h := StatusHandler("v", nil, func() []state.Probe { return states }, func() bool { return paused })
		_, page := get(t, h, "/")
		if !strings.Contains(page, `<div class="sub abort">by Prometheus guard target_5xx at 42</div>`) {
			t.Errorf("paused=%v: the last run's cell does not name the guard and its value", paused)
		}
		header := page[strings.Index(page, "<h1>"):strings.Index(page, "</h1>")]
		if got := strings.Contains(header, "paused"); got != paused {
			t.Errorf("paused=%v: first line %q", paused, header)
		}
		if got := strings.Contains(page, `<td class="state">paused</td>`); got != paused {
			t.Errorf("paused=%v: probe state shown paused=%v", paused, got)
		}
	}
}
