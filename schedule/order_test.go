package schedule

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Probes due at the same moment take a shared host in the order of the
// file, at start and when one reload adds several, whatever the order
// their goroutines run in; a continuous probe among them takes its turn
// as the others do.
func TestSchedulerProbesStartingTogetherRunInFileOrder(t *testing.T) {
	for _, order := range [][]string{{"a", "b", "c", "d"}, {"d", "c", "b", "a"}, {"c", "a", "d", "b"}} {
		t.Run(strings.Join(order, ""), func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, oneHostProbes(order...)))
				after(3 * time.Second)
				added := []string{"f", "e"}
				s.Apply(schedConfig(t, oneHostProbes(append(slices.Clone(order), added...)...)))
				after(3 * time.Second)
				evs := obs.snapshot()
				if got, want := firstStarts(evs), append(slices.Clone(order), added...); !slices.Equal(got, want) {
					t.Errorf("first runs in the order %v, want the file's %v:\n%s", got, want, formatEvents(evs))
				}
			})
		})
	}
}

// oneHostProbes is a config of ramps of 200 ms against one host, named in
// order, the last of the first four continuous.
func oneHostProbes(names ...string) string {
	var b strings.Builder
	b.WriteString("probes:\n")
	for i, name := range names {
		fmt.Fprintf(&b, "  - name: %s\n    request: {url: \"http://127.0.0.1:8080/%s\"}\n", name, name)
		if i == 3 {
			b.WriteString("    load: {rate: [10], step_duration: 200ms}\n    schedule: {continuous: true}\n")
			continue
		}
		b.WriteString("    load: {concurrency: [1], step_duration: 200ms}\n")
	}
	return b.String()
}

// firstStarts names the probes in the order their first runs started.
func firstStarts(evs []obsEvent) []string {
	var names []string
	for _, e := range evs {
		if e.kind == "started" && !slices.Contains(names, e.probe) {
			names = append(names, e.probe)
		}
	}
	return names
}
