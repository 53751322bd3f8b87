// Package testkit holds the helpers that the tests of several packages
// share: files, text assertions, polling, timing checks tried again, one-sample reads of an
// exposition, loopback and WebSocket servers, CPU time. Nothing outside
// tests imports it.
package testkit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// WriteFile writes body to path or fails the test.
func WriteFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Contains reports every wanted text that body lacks.
func Contains(t testing.TB, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, body)
		}
	}
}

// Lacks reports every unwanted text that body holds.
func Lacks(t testing.TB, what, body string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(body, w) {
			t.Errorf("%s contains %q:\n%s", what, w, body)
		}
	}
}

// MetricValue reads one sample, named with its labels as /metrics writes
// them, from a scrape; it fails the test when the series is missing.
func MetricValue(t testing.TB, scrape, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", series)
	return 0
}

// ThreeTries runs a timing check on a shared machine up to three times:
// try returns what is wrong, nothing when it passed. The problems of a try
// that failed are logged; those of the third are the test's errors.
func ThreeTries(t testing.TB, try func() []string) {
	t.Helper()
	var problems []string
	for n := 1; n <= 3; n++ {
		if problems = try(); len(problems) == 0 {
			return
		}
		t.Logf("try %d: %s", n, strings.Join(problems, "; "))
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// WaitFor polls cond every 10ms for at most 5s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// GoodConfig is a valid config of one probe, aimed at http://127.0.0.1:8080
// (tests replace it with their own target).
const GoodConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request:
      url: http://127.0.0.1:8080/work
      basic_auth: {username: alice, password: hunter2}
    load: {concurrency: [1, 2], step_duration: 300ms}
    expect: {min_capacity: 400}
`

// OtherConfig replaces the probe "work" with "other".
const OtherConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: other
    request: {url: http://127.0.0.1:8080/noop}
    load: {rate: [10, 20], step_duration: 300ms}
    schedule: {interval: 30m}
`

// BadConfig fails validation on line 4: the host is not allowed.
const BadConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: http://192.0.2.1/work}
    load: {concurrency: [1, 2, 4]}
`

// ManyProbes is a valid config of n probes, each against a closed port of
// 127.0.0.1 (nothing is sent: it is for checks and loads), every second one
// with the first as its control: the size at which validation must stay
// linear in the number of probes.
func ManyProbes(n int) string {
	var b strings.Builder
	b.WriteString("allowed_targets: [\"127.0.0.1\"]\nprobes:\n")
	for i := range n {
		control := ""
		if i%2 == 1 {
			control = ", control: p0"
		}
		fmt.Fprintf(&b, "  - {name: p%d, request: {url: \"http://127.0.0.1:1/\"}, load: {concurrency: [1], step_duration: 1s}, schedule: {interval: 1h}%s}\n", i, control)
	}
	return b.String()
}
