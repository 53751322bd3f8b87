package config

import (
	"fmt"
	"testing"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
)

// A search's keys left out keep their defaults; its steps count its axis,
// while its kind, for loadprobe_probe_info, is search.
func TestSearchDefaultsAndAxis(t *testing.T) {
	for _, tc := range []struct {
		search string
		mode   plan.Mode
		peak   float64
	}{
		{"{concurrency: {from: 1, max: 1024}}", plan.ModeConcurrency, 1024},
		{"{rate: {from: 50, max: 20000}}", plan.ModeRate, 20000},
	} {
		c, err := Parse("x.yml", []byte(fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "http://127.0.0.1:8080/work"}
    load:
      search: %s
`, tc.search)))
		if err != nil {
			t.Fatal(err)
		}
		l := c.Probes[0].Load
		if s := l.Search; s.Precision != 0.1 || s.MaxSteps != 24 || s.Line != 6 {
			t.Errorf("%s: precision %g, max_steps %d, line %d; want the defaults 0.1 and 24, line 6", tc.search, s.Precision, s.MaxSteps, s.Line)
		}
		if l.Mode() != tc.mode || l.Key() != plan.ModeSearch || l.Peak() != tc.peak {
			t.Errorf("%s: mode %s, key %s, peak %g; want %s, search, %g", tc.search, l.Mode(), l.Key(), l.Peak(), tc.mode, tc.peak)
		}
		if err := c.CheckShard("x.yml", fleet.Shard{}, false); err != nil {
			t.Errorf("a lone loadprobe may search: %v", err)
		}
		if err := c.CheckShard("x.yml", fleet.Shard{Index: 1, Count: 3}, true); err != nil {
			t.Errorf("a fleet's replica that reads the fleet from Prometheus may search: %v", err)
		}
		want := `x.yml:6: probes[0].load.search: a fleet (--shard 1/3) searches by reading every shard's steps from the fleet's Prometheus, and this replica has no --fleet.prometheus-url; give it one, give probe "work" a concurrency or rate ramp, or run it on one loadprobe`
		if err := c.CheckShard("x.yml", fleet.Shard{Index: 1, Count: 3}, false); err == nil || err.Error() != want {
			t.Errorf("on a fleet without its Prometheus:\n got: %v\nwant: %s", err, want)
		}
	}
}
