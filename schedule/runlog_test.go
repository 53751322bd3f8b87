package schedule

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log's output that the scheduler's goroutines write and
// the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) lines(re string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range strings.Split(w.b.String(), "\n") {
		if regexp.MustCompile(re).MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// A continuous probe's runs are logged at debug, and summed up in one line
// at info per minute; a scheduled probe's run is logged at info. Over 185s
// of a canary whose runs take 10s: 18 runs at debug, and three summaries
// of six runs each (the ramp's 2s run delays one minute by its length:
// the canary may not run beside it).
func TestContinuousRunsAreSummedUpOncePerMinute(t *testing.T) {
	var out syncBuffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	bubble(t, Options{Logger: logger}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, `probes:
  - name: canary
    request: {url: "http://127.0.0.1/noop"}
    load: {rate: [10], step_duration: 10s}
    schedule: {continuous: true}
  - name: ramp
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 2], step_duration: 1s}
`))
		after(185 * time.Second)
	})
	if got := out.lines(`level=DEBUG msg="Run ended" probe=canary result=completed duration=10s`); len(got) != 18 {
		t.Errorf("%d canary runs logged at debug, want 18", len(got))
	}
	if got := out.lines(`level=INFO msg="Run ended" probe=canary`); len(got) != 0 {
		t.Errorf("canary runs logged at info: %q", got)
	}
	summaries := out.lines(`level=INFO msg="Continuous runs" probe=canary`)
	if len(summaries) != 3 {
		t.Errorf("%d summaries, want 3 (one a minute):\n%s", len(summaries), strings.Join(summaries, "\n"))
	}
	for _, l := range summaries {
		if !regexp.MustCompile(`runs=6 valid=0 last_result=completed last_goodput=0 over=1m[02]s$`).MatchString(l) {
			t.Errorf("summary %q: want six runs over a minute", l)
		}
	}
	if got := out.lines(`level=INFO msg="Run ended" probe=ramp result=completed duration=2s`); len(got) != 1 {
		t.Errorf("the ramp's run logged %d times at info, want once", len(got))
	}
}
