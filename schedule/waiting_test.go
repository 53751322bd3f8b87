package schedule

import (
	"testing"
	"time"
)

// A waiting probe's state names what it waits for: the probe holding its
// host, the cap it would exceed, or the runs it may not run beside. The
// first probe of the file goes first; the second waits, and want says what
// its state reads.
func TestSchedulerWaitingSaysForWhat(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		want      string
	}{
		{"its host", `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
  - name: c
    request: {url: "http://localhost/noop"}
    load: {rate: [10], step_duration: 1s}
    schedule: {continuous: true}
`, "127.0.0.1 is busy with a"},
		{"max_concurrency", `max_concurrency: 4
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [2, 4], step_duration: 1s}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 4], step_duration: 1s}
`, "max_concurrency 4: 4 connections in use, 4 needed"},
		{"max_rate", `max_rate: 100
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {rate: [50, 100], step_duration: 1s}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {rate: [60, 60.5], step_duration: 1s}
`, "max_rate 100: 100/s in use, 60.5/s needed"},
		{"max_parallel_runs", `max_parallel_runs: 1
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
`, "max_parallel_runs 1: a running"},
		{"a ramp beside a canary", `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {rate: [100, 200], step_duration: 1s}
  - name: c
    request: {url: "http://127.0.0.2/noop"}
    load: {rate: [10], step_duration: 1s}
    schedule: {continuous: true}
`, "a is running, and c may not run beside it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, tc.yml))
				after(500 * time.Millisecond)
				states := s.Snapshot()
				first, second := states[0], states[1]
				if first.Waiting || first.WaitingFor != "" {
					t.Errorf("%s, the first of the file, waits for %q", first.Probe.Name, first.WaitingFor)
				}
				if !second.Waiting || second.WaitingFor != tc.want {
					t.Errorf("%s waits (%v) for %q, want %q", second.Probe.Name, second.Waiting, second.WaitingFor, tc.want)
				}
			})
		})
	}
}
