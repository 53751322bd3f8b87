package schedule

import (
	"strings"
	"testing"
	"time"
)

// A waiting probe's state names what it waits for: the probe holding its
// host, the cap it would exceed, or the runs it may not run beside. Which
// of the two probes goes first is up to the runtime; the other waits, and
// want says what it reads, with HOLDER for the one that went first.
func TestSchedulerWaitingSaysForWhat(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		want      map[string]string // by the waiting probe
	}{
		{"its host", `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
  - name: c
    request: {url: "http://localhost/noop"}
    load: {rate: [10], step_duration: 1s}
    schedule: {continuous: true}
`, map[string]string{"a": "127.0.0.1 is busy with c (continuous)", "c": "127.0.0.1 is busy with a"}},
		{"max_concurrency", `max_concurrency: 4
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [2, 4], step_duration: 1s}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 4], step_duration: 1s}
`, map[string]string{"a": "max_concurrency 4: 4 connections in use, 4 needed", "b": "max_concurrency 4: 4 connections in use, 4 needed"}},
		{"max_rate", `max_rate: 100
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {rate: [50, 100], step_duration: 1s}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {rate: [60, 60.5], step_duration: 1s}
`, map[string]string{"a": "max_rate 100: 60.5/s in use, 100/s needed", "b": "max_rate 100: 100/s in use, 60.5/s needed"}},
		{"max_parallel_runs", `max_parallel_runs: 1
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
`, map[string]string{"a": "max_parallel_runs 1: b running", "b": "max_parallel_runs 1: a running"}},
		{"a ramp beside a canary", `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {rate: [100, 200], step_duration: 1s}
  - name: c
    request: {url: "http://127.0.0.2/noop"}
    load: {rate: [10], step_duration: 1s}
    schedule: {continuous: true}
`, map[string]string{"a": "c (continuous) is running, and a may not run beside it", "c": "a is running, and c may not run beside it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, tc.yml))
				after(500 * time.Millisecond)
				var waiting []string
				for _, st := range s.Snapshot() {
					if !st.Waiting {
						if st.WaitingFor != "" {
							t.Errorf("%s runs, but its state says it waits for %q", st.Probe.Name, st.WaitingFor)
						}
						continue
					}
					waiting = append(waiting, st.Probe.Name)
					if want := tc.want[st.Probe.Name]; st.WaitingFor != want {
						t.Errorf("%s waits for %q, want %q", st.Probe.Name, st.WaitingFor, want)
					}
				}
				if len(waiting) != 1 {
					t.Fatalf("waiting: %s; want one of the two", strings.Join(waiting, ", "))
				}
			})
		})
	}
}
