package fleet

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
)

// The fleet's guard asks, as often as the probe's quickest guard judges,
// whether a peer exported a stopped run that started within a second of
// this one's aligned start; a probe without guards watches nothing.
func TestGuardAsksForThePeersStopOfThisRun(t *testing.T) {
	run := time.Date(2026, 12, 6, 3, 0, 30, 0, time.UTC)
	prom := &Prometheus{Prometheus: plan.Prometheus{URL: "http://prom:9090"}, Selector: `job="loadprobe"`}
	live := plan.Guard{Window: model.Duration(500 * time.Millisecond), ErrorRatio: 0.5, For: 1}
	slowProm := &plan.PrometheusGuard{Interval: model.Duration(5 * time.Second)}
	quickProm := &plan.PrometheusGuard{Interval: model.Duration(200 * time.Millisecond)}
	for _, tc := range []struct {
		name  string
		guard plan.Guard
		every time.Duration // 0: no fleet guard
	}{
		{"live guards", live, 500 * time.Millisecond},
		{"a slower Prometheus guard beside them", plan.Guard{Window: live.Window, ErrorRatio: 0.5, Prometheus: slowProm}, 500 * time.Millisecond},
		{"a quicker Prometheus guard beside them", plan.Guard{Window: live.Window, ErrorRatio: 0.5, Prometheus: quickProm}, 200 * time.Millisecond},
		{"a Prometheus guard alone", plan.Guard{Window: live.Window, Prometheus: slowProm}, 5 * time.Second},
		{"no guard", plan.Guard{Window: live.Window, For: 1}, 0},
	} {
		g := prom.Guard("work", tc.guard, run)
		if tc.every == 0 {
			if g != nil {
				t.Errorf("%s: fleet guard %+v, want none", tc.name, g)
			}
			continue
		}
		if g == nil {
			t.Fatalf("%s: no fleet guard", tc.name)
		}
		if time.Duration(g.Interval) != tc.every || g.URL != prom.URL || g.OnError != plan.OnErrorIgnore {
			t.Errorf("%s: every %v at %s, on error %s; want every %v at %s, ignoring errors", tc.name, time.Duration(g.Interval), g.URL, g.OnError, tc.every, prom.URL)
		}
		want := `(max(loadprobe_guard_stopped_run_timestamp_seconds{probe="work",job="loadprobe"}) or vector(0)) >= bool 1796526029.000`
		if len(g.Queries) != 1 || g.Queries[0].Query != want || g.Queries[0].Name != GuardName || *g.Queries[0].Max != 0 || g.Queries[0].For != 1 {
			t.Errorf("%s: queries %+v, want one named %s asking\n%s\nthat breaches above 0 at once", tc.name, g.Queries, GuardName, want)
		}
	}
}
