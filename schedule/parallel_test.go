package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// overlaps lists the overlapping_runs of each step of probe's last run.
func overlaps(t *testing.T, s *Scheduler, probe string) []int {
	t.Helper()
	st := probeState(t, s, probe)
	if st.Last == nil {
		t.Fatalf("%s has no finished run", probe)
	}
	var n []int
	for _, step := range st.Last.Steps {
		n = append(n, step.OverlappingRuns)
	}
	return n
}

// Two ramps on two hosts: by default (max_parallel_runs 1) one runs after
// the other and no step overlapped another run; with max_parallel_runs 2
// they run together and every step of each says so.
func TestSchedulerMaxParallelRuns(t *testing.T) {
	const ramps = `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
    schedule: {interval: 1h}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {rate: [10, 20], step_duration: 300ms}
    schedule: {interval: 1h}
`
	for _, tc := range []struct {
		name, head string
		together   bool
	}{
		{"default", "max_parallel_runs: 1\n", false},
		{"two at once", "max_parallel_runs: 2\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, tc.head+ramps))
				after(2 * time.Second)
				evs := obs.snapshot()
				sa, sb := spans(evs, "a"), spans(evs, "b")
				if len(sa) != 1 || len(sb) != 1 || overlap(sa[0], sb[0]) != tc.together {
					t.Fatalf("want one run of each, together: %v:\n%s", tc.together, formatEvents(evs))
				}
				want := fmt.Sprint([]int{0, 0})
				if tc.together {
					want = fmt.Sprint([]int{1, 1})
				}
				for _, p := range []string{"a", "b"} {
					if got := fmt.Sprint(overlaps(t, s, p)); got != want {
						t.Errorf("%s: overlapping_runs by step %s, want %s", p, got, want)
					}
				}
			})
		})
	}
}

// A continuous probe runs beside a ramp only when its load is at most 1%
// of the ramp's peak, in the same loop; then neither counts the other as
// overlapping. Otherwise they take turns.
func TestSchedulerContinuousBesideARamp(t *testing.T) {
	for _, tc := range []struct {
		name, canary string
		beside       bool
	}{
		{"1 req/s beside a ramp to 200 req/s", "rate: [1]", true},
		{"10 req/s is not small against 200", "rate: [10]", false},
		{"connections beside requests per second are not compared", "concurrency: [1]", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, fmt.Sprintf(`max_parallel_runs: 1
probes:
  - name: ramp
    request: {url: "http://127.0.0.1/work"}
    load: {rate: [100, 200], step_duration: 300ms}
  - name: canary
    request: {url: "http://127.0.0.2/work"}
    load: {%s, step_duration: 200ms}
    schedule: {continuous: true}
`, tc.canary)))
				after(1500 * time.Millisecond)
				evs := obs.snapshot()
				ramp, canary := spans(evs, "ramp"), spans(evs, "canary")
				if len(ramp) != 1 || ramp[0].result != result.ResultCompleted || len(canary) < 2 {
					t.Fatalf("want the ramp's run and the canary's runs:\n%s", formatEvents(evs))
				}
				together := false
				for _, c := range canary {
					together = together || overlap(c, ramp[0])
				}
				if together != tc.beside {
					t.Errorf("canary ran beside the ramp: %v, want %v:\n%s", together, tc.beside, formatEvents(evs))
				}
				if got := fmt.Sprint(overlaps(t, s, "ramp")); got != "[0 0]" {
					t.Errorf("ramp: overlapping_runs by step %s, want none", got)
				}
				if got := fmt.Sprint(overlaps(t, s, "canary")); got != "[0]" {
					t.Errorf("canary: overlapping_runs %s, want none", got)
				}
			})
		})
	}
}
