package statuspage

import (
	"regexp"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// runsOf is a history of runs an hour apart, the latest an hour ago, with
// the given capacities; the knee sits at the capacity's level.
func runsOf(now time.Time, capacities ...float64) []state.Run {
	var h []state.Run
	for i, c := range capacities {
		lv := float64(4 * (i + 1))
		h = append(h, state.Run{Started: now.Add(-time.Duration(len(capacities)-i) * time.Hour), Ended: result.ResultCompleted,
			Valid: i != 1, Capacity: &result.Point{Level: lv, Throughput: c}, Knee: &result.Point{Level: lv, Throughput: c}})
	}
	return h
}

// A probe's stored runs are drawn as a small chart of capacity and knee,
// one dot of each per run, oldest first; a single run, or a continuous
// probe's runs, have none.
func TestStatusPageDrawsTheHistory(t *testing.T) {
	now := time.Now()
	canary := probe("canary", 10)
	canary.Schedule.Continuous = true
	states := []state.Probe{
		{Probe: probe("work", 1, 2, 4, 8, 16), Last: finished("work", now.Add(-time.Hour)), History: runsOf(now, 400, 380, 410)},
		{Probe: probe("once", 1, 2, 4, 8, 16), Last: finished("once", now.Add(-time.Hour)), History: runsOf(now, 400)},
		{Probe: canary, Last: finished("canary", now.Add(-time.Hour)), History: runsOf(now, 10, 10, 10)},
	}
	_, body := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	charts := regexp.MustCompile(`(?s)<div class="history" id="history-([^"]+)">.*?</svg>`).FindAllStringSubmatch(body, -1)
	if len(charts) != 1 || charts[0][1] != "work" {
		t.Fatalf("%d history charts, want work's alone", len(charts))
	}
	svg := parseSVG(t, charts[0][0][regexp.MustCompile(`<svg`).FindStringIndex(charts[0][0])[0]:])
	good, knee := svg.find("circle", "good"), svg.find("circle", "knee")
	if len(good) != 3 || len(knee) != 3 {
		t.Fatalf("%d capacity and %d knee dots, want 3 each", len(good), len(knee))
	}
	// Oldest on the left; 380/s is lower on screen (a larger y) than 410/s.
	if !(num(t, good[0].attr("cx")) < num(t, good[2].attr("cx")) && num(t, good[1].attr("cy")) > num(t, good[2].attr("cy"))) {
		t.Errorf("capacity dots %v are not in order of time and value", good)
	}
	// The knee keeps the lower half of the plot, so that a steady knee
	// never runs over a steady capacity along the top.
	for _, k := range knee {
		if y := num(t, k.attr("cy")); y < historyFrame.MidY {
			t.Errorf("a knee dot at y %g, above the plot's middle (%g)", y, historyFrame.MidY)
		}
	}
	testkit.Contains(t, "the history chart", charts[0][0],
		`the last 3 stored runs`,
		`<title>run 2h0m ago (completed, not valid): capacity 380/s at 8 connections</title>`,
		`<title>run 1h0m ago (completed): knee at 12 connections (goodput 410/s)</title>`,
		`>3h0m ago</text>`, `>knee (connections)</text>`,
	)
}

// The history marks the run where the capacity's latest change point
// begins, counting the completed valid runs as the change does.
func TestHistoryMarksTheChange(t *testing.T) {
	now := time.Now()
	// The second run is not valid (runsOf): two valid runs ago is the third.
	h := runsOf(now, 400, 380, 200, 205)
	states := []state.Probe{{Probe: probe("work", 1, 2, 4, 8, 16), Last: finished("work", now.Add(-time.Hour)), History: h,
		Change: &result.CapacityChange{RunsAgo: 2, Before: 400, After: 202.5}}}
	_, body := get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	chart := regexp.MustCompile(`(?s)<svg class="history".*?</svg>`).FindString(body)
	svg := parseSVG(t, chart)
	marks, good := svg.find("line", "change"), svg.find("circle", "good")
	if len(marks) != 1 || len(good) != 4 || marks[0].attr("x1") != good[2].attr("cx") {
		t.Fatalf("change marks %v, want one at the third run's dot %v", marks, good)
	}
	testkit.Contains(t, "the change's mark", chart, "<title>capacity changed here: 400/s before, 202/s since</title>")
	states[0].Change = nil
	_, body = get(t, StatusHandler("v", nil, func() []state.Probe { return states }, notPaused), "/")
	testkit.Lacks(t, "a history without a change", body, `class="change"`)
}
