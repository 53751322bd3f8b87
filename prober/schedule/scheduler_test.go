package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/prober/result"
	"github.com/loadprobe/loadprobe/prober/target"

	"go.uber.org/goleak"

	"github.com/loadprobe/loadprobe/config"
)

// obsEvent is one call the scheduler made on its Observer.
type obsEvent struct {
	kind   string // started, ended, waited, forget
	probe  string
	result result.RunResult // ended
	secs   float64          // waited
	at     time.Time
}

// recObserver records every Observer call, in order.
type recObserver struct {
	mu     sync.Mutex
	events []obsEvent
	change chan struct{} // closed and replaced on every event
}

func newRecObserver() *recObserver { return &recObserver{change: make(chan struct{})} }

func (o *recObserver) add(e obsEvent) {
	e.at = time.Now()
	o.mu.Lock()
	o.events = append(o.events, e)
	close(o.change)
	o.change = make(chan struct{})
	o.mu.Unlock()
}

func (o *recObserver) Live(string) prober.Live { return prober.NopLive{} }
func (o *recObserver) RunStarted(p string)     { o.add(obsEvent{kind: "started", probe: p}) }
func (o *recObserver) RunEnded(p string, r result.RunResult) {
	o.add(obsEvent{kind: "ended", probe: p, result: r})
}
func (o *recObserver) Waited(p string, seconds float64) {
	o.add(obsEvent{kind: "waited", probe: p, secs: seconds})
}
func (o *recObserver) Forget(p string) { o.add(obsEvent{kind: "forget", probe: p}) }

func (o *recObserver) snapshot() ([]obsEvent, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.events), o.change
}

// waitUntil waits at most d for cond to hold over the events so far.
func (o *recObserver) waitUntil(t *testing.T, d time.Duration, what string, cond func([]obsEvent) bool) []obsEvent {
	t.Helper()
	deadline := time.After(d)
	for {
		evs, change := o.snapshot()
		if cond(evs) {
			return evs
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s; events:\n%s", d, what, formatEvents(evs))
		}
	}
}

func formatEvents(evs []obsEvent) string {
	var b strings.Builder
	var t0 time.Time
	if len(evs) > 0 {
		t0 = evs[0].at
	}
	for _, e := range evs {
		fmt.Fprintf(&b, "  %6dms %-7s %s %s", e.at.Sub(t0).Milliseconds(), e.kind, e.probe, e.result)
		if e.kind == "waited" {
			fmt.Fprintf(&b, "%.3fs", e.secs)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func count(evs []obsEvent, kind, probe string, r result.RunResult) int {
	n := 0
	for _, e := range evs {
		if e.kind == kind && e.probe == probe && (r == "" || e.result == r) {
			n++
		}
	}
	return n
}

// span is one run of a probe as the observer saw it.
type span struct {
	start, end time.Time
	result     result.RunResult
}

// spans pairs the RunStarted and RunEnded calls of probe (runs of one probe
// never overlap); a run still under way has a zero end.
func spans(evs []obsEvent, probe string) []span {
	var ss []span
	for _, e := range evs {
		if e.probe != probe {
			continue
		}
		switch e.kind {
		case "started":
			ss = append(ss, span{start: e.at})
		case "ended":
			if len(ss) > 0 && ss[len(ss)-1].end.IsZero() {
				ss[len(ss)-1].end, ss[len(ss)-1].result = e.at, e.result
			}
		}
	}
	return ss
}

func waitedSum(evs []obsEvent, probe string) float64 {
	var s float64
	for _, e := range evs {
		if e.kind == "waited" && e.probe == probe {
			s += e.secs
		}
	}
	return s
}

func overlap(a, b span) bool { return a.start.Before(b.end) && b.start.Before(a.end) }

// targetOn serves a fresh demo target on ip (a loopback address) and
// returns its base URL.
func targetOn(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s (a second loopback address stands for a second host): %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(target.New(target.Options{}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// schedConfig parses a config whose $A, $B, ... stand for the given base URLs.
func schedConfig(t *testing.T, yml string, urls map[string]string) *config.Config {
	t.Helper()
	var pairs []string
	for k, v := range urls {
		pairs = append(pairs, "$"+k, v)
	}
	yml = strings.NewReplacer(pairs...).Replace(yml)
	cfg, err := config.Parse("sched.yml", []byte(yml))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yml)
	}
	return cfg
}

// startScheduler runs a scheduler until the test ends; cancel stops it
// early. The test fails if its loops do not end within 5s of the cancel.
func startScheduler(t *testing.T, store *Store) (s *Scheduler, obs *recObserver, stop func()) {
	t.Helper()
	obs = newRecObserver()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := New(ctx, obs, store, discardLogger)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			done := make(chan struct{})
			go func() { s.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("scheduler loops still running 5s after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return s, obs, stop
}

var discardLogger = slog.New(slog.DiscardHandler)

const header = `allowed_targets: ["127.0.0.1", "127.0.0.2", "localhost"]
`

// Two probes against one host must never run at once: the second waits,
// and the wait is reported. 127.0.0.1 and localhost are one host.
func TestSchedulerHostExclusivity(t *testing.T) {
	target := targetOn(t, "127.0.0.1")
	for _, tc := range []struct{ name, a, b string }{
		{"same name", target, target},
		{"localhost is 127.0.0.1", target, strings.Replace(target, "127.0.0.1", "localhost", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := schedConfig(t, header+`probes:
  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
  - name: b
    request: {url: "$B/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
`, map[string]string{"A": tc.a, "B": tc.b})
			s, obs, _ := startScheduler(t, nil)
			s.Apply(cfg)
			evs := obs.waitUntil(t, 10*time.Second, "a run of each probe", func(evs []obsEvent) bool {
				return count(evs, "ended", "a", "") >= 1 && count(evs, "ended", "b", "") >= 1
			})
			sa, sb := spans(evs, "a")[0], spans(evs, "b")[0]
			if sa.result != result.ResultCompleted || sb.result != result.ResultCompleted {
				t.Fatalf("results %s and %s, want completed:\n%s", sa.result, sb.result, formatEvents(evs))
			}
			if overlap(sa, sb) {
				t.Errorf("runs against one host overlapped:\n%s", formatEvents(evs))
			}
			later, first := "b", sa
			if sb.start.Before(sa.start) {
				later, first = "a", sb
			}
			w := waitedSum(evs, later)
			// It waited for the whole first run: two steps of 300ms.
			if w < 0.5 || w > first.end.Sub(first.start).Seconds()+0.2 {
				t.Errorf("%s waited %.3fs, want about the first run's %.3fs", later, w, first.end.Sub(first.start).Seconds())
			}
		})
	}
}

// Probes against different hosts run at the same time, and neither waits.
func TestSchedulerDifferentHostsRunTogether(t *testing.T) {
	a, b := targetOn(t, "127.0.0.1"), targetOn(t, "127.0.0.2")
	cfg := schedConfig(t, header+`probes:
  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
  - name: b
    request: {url: "$B/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
`, map[string]string{"A": a, "B": b})
	s, obs, _ := startScheduler(t, nil)
	s.Apply(cfg)
	evs := obs.waitUntil(t, 10*time.Second, "a run of each probe", func(evs []obsEvent) bool {
		return count(evs, "ended", "a", "") >= 1 && count(evs, "ended", "b", "") >= 1
	})
	if !overlap(spans(evs, "a")[0], spans(evs, "b")[0]) {
		t.Errorf("runs against different hosts did not overlap:\n%s", formatEvents(evs))
	}
	for _, p := range []string{"a", "b"} {
		if w := waitedSum(evs, p); w > 0.1 {
			t.Errorf("%s waited %.3fs with nothing in its way", p, w)
		}
	}
}

// The sum of running concurrency (rate) never exceeds max_concurrency
// (max_rate): two probes that each fill the cap take turns even on
// different hosts, while a probe alone always fits.
func TestSchedulerCaps(t *testing.T) {
	a, b := targetOn(t, "127.0.0.1"), targetOn(t, "127.0.0.2")
	for _, tc := range []struct{ name, yml string }{
		{"max_concurrency", `max_concurrency: 4
probes:
  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [2, 4], step_duration: 300ms}
  - name: b
    request: {url: "$B/work"}
    load: {concurrency: [1, 4], step_duration: 300ms}
`},
		{"max_rate", `max_rate: 100
probes:
  - name: a
    request: {url: "$A/work"}
    load: {rate: [50, 100], step_duration: 300ms}
  - name: b
    request: {url: "$B/work"}
    load: {rate: [60], step_duration: 300ms}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := schedConfig(t, header+tc.yml, map[string]string{"A": a, "B": b})
			s, obs, _ := startScheduler(t, nil)
			s.Apply(cfg)
			evs := obs.waitUntil(t, 10*time.Second, "a run of each probe", func(evs []obsEvent) bool {
				return count(evs, "ended", "a", "") >= 1 && count(evs, "ended", "b", "") >= 1
			})
			sa, sb := spans(evs, "a")[0], spans(evs, "b")[0]
			if overlap(sa, sb) {
				t.Errorf("two probes that together exceed the cap ran at once:\n%s", formatEvents(evs))
			}
			if sa.result != result.ResultCompleted || sb.result != result.ResultCompleted {
				t.Errorf("results %s and %s, want completed", sa.result, sb.result)
			}
			later := "b"
			if sb.start.Before(sa.start) {
				later = "a"
			}
			if w := waitedSum(evs, later); w <= 0.2 {
				t.Errorf("%s waited %.3fs for room under the cap, want the other's run", later, w)
			}
		})
	}
}

// A ramp against the host of a continuous canary gets its turn: the canary
// asks again the moment its run ends but does not jump the queue.
func TestSchedulerContinuousProbeDoesNotStarveAnother(t *testing.T) {
	a := targetOn(t, "127.0.0.1")
	cfg := schedConfig(t, header+`probes:
  - name: canary
    request: {url: "$A/work"}
    load: {concurrency: [1], step_duration: 200ms}
    schedule: {continuous: true}
  - name: ramp
    request: {url: "$A/work"}
    load: {concurrency: [1, 2], step_duration: 200ms}
`, map[string]string{"A": a})
	s, obs, _ := startScheduler(t, nil)
	s.Apply(cfg)
	evs := obs.waitUntil(t, 10*time.Second, "a run of the ramp", func(evs []obsEvent) bool {
		return count(evs, "ended", "ramp", result.ResultCompleted) >= 1 && count(evs, "ended", "canary", "") >= 3
	})
	canary := spans(evs, "canary")
	ramp := spans(evs, "ramp")[0]
	for _, c := range canary {
		if !c.end.IsZero() && overlap(c, ramp) {
			t.Errorf("canary and ramp overlapped on one host:\n%s", formatEvents(evs))
		}
	}
	// Back to back: each canary run starts right after the one before,
	// unless the ramp ran in between.
	for i := 1; i < len(canary); i++ {
		gap := canary[i].start.Sub(canary[i-1].end)
		between := ramp.start.After(canary[i-1].end) && ramp.end.Before(canary[i].start)
		if !between && gap > 250*time.Millisecond {
			t.Errorf("continuous probe idled %s between runs %d and %d", gap, i, i+1)
		}
	}
}

// A reload leaves an unchanged probe's run alone, cancels a changed one's
// (RunEnded "canceled") and starts it again with its new config.
func TestSchedulerReloadMidRun(t *testing.T) {
	a, b := targetOn(t, "127.0.0.1"), targetOn(t, "127.0.0.2")
	urls := map[string]string{"A": a, "B": b}
	const probeA = `  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [1, 2], step_duration: 700ms}
`
	cfg1 := schedConfig(t, header+"probes:\n"+probeA+`  - name: b
    request: {url: "$B/work"}
    load: {concurrency: [1, 2], step_duration: 3s}
`, urls)
	cfg2 := schedConfig(t, header+"probes:\n"+probeA+`  - name: b
    request: {url: "$B/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
`, urls)
	s, obs, _ := startScheduler(t, nil)
	s.Apply(cfg1)
	obs.waitUntil(t, 5*time.Second, "both runs to start", func(evs []obsEvent) bool {
		return count(evs, "started", "a", "") == 1 && count(evs, "started", "b", "") == 1
	})
	time.Sleep(200 * time.Millisecond)
	aStarted := current(t, s, "a").Started

	applied := time.Now()
	s.Apply(cfg2)
	if st := current(t, s, "a"); !st.Started.Equal(aStarted) {
		t.Errorf("a's run under way changed at the reload: started %v, was %v", st.Started, aStarted)
	}
	evs := obs.waitUntil(t, 10*time.Second, "a's run to end and b's new run to complete", func(evs []obsEvent) bool {
		return count(evs, "ended", "a", "") >= 1 && count(evs, "ended", "b", result.ResultCompleted) >= 1
	})
	sa, sb := spans(evs, "a"), spans(evs, "b")
	if len(sa) != 1 || sa[0].result != result.ResultCompleted {
		t.Errorf("a: runs %+v, want its one run completed, untouched by the reload:\n%s", sa, formatEvents(evs))
	}
	if len(sb) < 2 || sb[0].result != result.ResultCanceled || sb[1].result != result.ResultCompleted {
		t.Fatalf("b: runs %+v, want the old run canceled, then a new one completed:\n%s", sb, formatEvents(evs))
	}
	if d := sb[0].end.Sub(applied); d > time.Second {
		t.Errorf("b's old run ended %s after the reload, want within 1s", d)
	}
	if !sb[1].start.After(sb[0].end) {
		t.Errorf("b's new run started before its old one ended:\n%s", formatEvents(evs))
	}
	for _, st := range s.Snapshot() {
		if st.Last == nil {
			t.Errorf("%s has no last run", st.Probe.Name)
			continue
		}
		if st.Last.Result != result.ResultCompleted {
			t.Errorf("%s's last run is %s, want completed (a canceled run is no result)", st.Probe.Name, st.Last.Result)
		}
		if st.Probe.Name == "a" && !st.Last.Started.Equal(aStarted) {
			t.Errorf("a's last run started %v, want the run under way at the reload (%v)", st.Last.Started, aStarted)
		}
		if st.Probe.Name == "b" && time.Duration(st.Probe.Load.StepDuration) != 300*time.Millisecond {
			t.Errorf("b runs with step_duration %s, want the reloaded 300ms", st.Probe.Load.StepDuration)
		}
	}
}

// current returns the run under way of probe.
func current(t *testing.T, s *Scheduler, probe string) result.Result {
	t.Helper()
	for _, st := range s.Snapshot() {
		if st.Probe.Name == probe {
			if st.Current == nil {
				t.Fatalf("%s has no run under way", probe)
			}
			return *st.Current
		}
	}
	t.Fatalf("%s is not in the snapshot", probe)
	return result.Result{}
}

// A removed probe's run is canceled and its series forgotten, after its
// last word: nothing is reported about it after Forget.
func TestSchedulerRemovedProbe(t *testing.T) {
	a, b := targetOn(t, "127.0.0.1"), targetOn(t, "127.0.0.2")
	urls := map[string]string{"A": a, "B": b}
	both := schedConfig(t, header+`probes:
  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [1], step_duration: 300ms}
  - name: b
    request: {url: "$B/work"}
    load: {concurrency: [1, 2], step_duration: 3s}
`, urls)
	onlyA := schedConfig(t, header+`probes:
  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [1], step_duration: 300ms}
`, urls)
	s, obs, _ := startScheduler(t, nil)
	s.Apply(both)
	obs.waitUntil(t, 5*time.Second, "b to start", func(evs []obsEvent) bool { return count(evs, "started", "b", "") == 1 })
	s.Apply(onlyA)
	if err := s.Trigger("b"); !errors.Is(err, ErrUnknownProbe) {
		t.Errorf("Trigger of a removed probe = %v, want ErrUnknownProbe", err)
	}
	for _, st := range s.Snapshot() {
		if st.Probe.Name == "b" {
			t.Error("the removed probe is still in the snapshot")
		}
	}
	obs.waitUntil(t, 5*time.Second, "b to be forgotten", func(evs []obsEvent) bool { return count(evs, "forget", "b", "") == 1 })
	time.Sleep(300 * time.Millisecond)
	evs, _ := obs.snapshot()
	var sawCancel, sawForget bool
	for _, e := range evs {
		if e.probe != "b" {
			continue
		}
		switch {
		case e.kind == "forget":
			sawForget = true
		case sawForget:
			t.Errorf("%s about b after Forget: its series come back:\n%s", e.kind, formatEvents(evs))
		case e.kind == "ended" && e.result == result.ResultCanceled:
			sawCancel = true
		}
	}
	if !sawCancel {
		t.Errorf("b's run did not end canceled:\n%s", formatEvents(evs))
	}
	if count(evs, "forget", "a", "") != 0 {
		t.Error("the unchanged probe a was forgotten")
	}

	// Removed and added back at once: it is not forgotten, it runs.
	s.Apply(both)
	obs.waitUntil(t, 5*time.Second, "b to start again", func(evs []obsEvent) bool { return count(evs, "started", "b", "") == 2 })
	s.Apply(onlyA)
	s.Apply(both)
	evs = obs.waitUntil(t, 5*time.Second, "b's third run", func(evs []obsEvent) bool { return count(evs, "started", "b", "") == 3 })
	time.Sleep(100 * time.Millisecond)
	if n := count(evs, "forget", "b", ""); n != 1 {
		t.Errorf("b forgotten %d times, want once: it was added back before its old run ended:\n%s", n, formatEvents(evs))
	}
}

// No goroutine outlives its probe: not once a reload removes every probe,
// and not once the scheduler's context ends.
func TestSchedulerLeavesNoGoroutines(t *testing.T) {
	srv := httptest.NewServer(target.New(target.Options{}))
	ignore := goleak.IgnoreCurrent()
	cfg := schedConfig(t, header+`probes:
  - name: ramp
    request: {url: "$A/work"}
    load: {concurrency: [1, 2], step_duration: 200ms}
  - name: open
    request: {url: "$A/work"}
    load: {rate: [50], step_duration: 200ms}
  - name: canary
    request: {url: "$A/delay?ms=1"}
    load: {rate: [20], step_duration: 200ms}
    schedule: {continuous: true}
`, map[string]string{"A": srv.URL})

	ctx, cancel := context.WithCancel(context.Background())
	obs := newRecObserver()
	s, err := New(ctx, obs, nil, discardLogger)
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(cfg)
	obs.waitUntil(t, 10*time.Second, "every probe to run", func(evs []obsEvent) bool {
		return count(evs, "ended", "ramp", "") >= 1 && count(evs, "ended", "open", "") >= 1 && count(evs, "started", "canary", "") >= 2
	})
	s.Apply(&config.Config{MaxConcurrency: cfg.MaxConcurrency, MaxRate: cfg.MaxRate})
	obs.waitUntil(t, 5*time.Second, "every probe to be forgotten", func(evs []obsEvent) bool {
		return count(evs, "forget", "ramp", "") == 1 && count(evs, "forget", "open", "") == 1 && count(evs, "forget", "canary", "") == 1
	})
	if err := goleak.Find(ignore); err != nil {
		t.Errorf("goroutines outlive the probes a reload removed: %v", err)
	}

	s.Apply(cfg)
	obs.waitUntil(t, 10*time.Second, "the canary to run again", func(evs []obsEvent) bool {
		return count(evs, "started", "canary", "") >= 3
	})
	cancel()
	s.Wait()
	srv.Close()
	if err := goleak.Find(ignore); err != nil {
		t.Errorf("goroutines outlive the scheduler's context: %v", err)
	}
}

// Trigger starts a run at once; an unknown name is an error.
func TestSchedulerTrigger(t *testing.T) {
	a := targetOn(t, "127.0.0.1")
	cfg := schedConfig(t, header+`probes:
  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [1], step_duration: 200ms}
    schedule: {interval: 1h}
`, map[string]string{"A": a})
	s, obs, _ := startScheduler(t, nil)
	if err := s.Trigger("a"); !errors.Is(err, ErrUnknownProbe) {
		t.Errorf("Trigger before any config = %v, want ErrUnknownProbe", err)
	}
	s.Apply(cfg)
	if err := s.Trigger("nope"); !errors.Is(err, ErrUnknownProbe) {
		t.Errorf("Trigger(nope) = %v, want ErrUnknownProbe", err)
	}
	obs.waitUntil(t, 5*time.Second, "the run at start", func(evs []obsEvent) bool { return count(evs, "ended", "a", "") == 1 })
	time.Sleep(100 * time.Millisecond)
	if evs, _ := obs.snapshot(); count(evs, "started", "a", "") != 1 {
		t.Fatalf("a second run started on its own:\n%s", formatEvents(evs))
	}
	asked := time.Now()
	if err := s.Trigger("a"); err != nil {
		t.Fatal(err)
	}
	evs := obs.waitUntil(t, 5*time.Second, "the triggered run", func(evs []obsEvent) bool { return count(evs, "ended", "a", "") == 2 })
	if d := spans(evs, "a")[1].start.Sub(asked); d > 500*time.Millisecond {
		t.Errorf("the triggered run started %s after Trigger", d)
	}
	// Two triggers during a run: one more run after it, not two.
	s.Trigger("a")
	obs.waitUntil(t, 5*time.Second, "the third run to start", func(evs []obsEvent) bool { return count(evs, "started", "a", "") == 3 })
	s.Trigger("a")
	s.Trigger("a")
	obs.waitUntil(t, 5*time.Second, "the fourth run", func(evs []obsEvent) bool { return count(evs, "ended", "a", "") == 4 })
	time.Sleep(400 * time.Millisecond)
	if evs, _ := obs.snapshot(); count(evs, "started", "a", "") != 4 {
		t.Errorf("triggers during a run queued more than one run:\n%s", formatEvents(evs))
	}
}

// A continuous probe runs back to back.
func TestSchedulerContinuous(t *testing.T) {
	a := targetOn(t, "127.0.0.1")
	cfg := schedConfig(t, header+`probes:
  - name: c
    request: {url: "$A/work"}
    load: {concurrency: [1], step_duration: 200ms}
    schedule: {continuous: true}
`, map[string]string{"A": a})
	s, obs, _ := startScheduler(t, nil)
	s.Apply(cfg)
	evs := obs.waitUntil(t, 5*time.Second, "three runs", func(evs []obsEvent) bool { return count(evs, "ended", "c", "") >= 3 })
	ss := spans(evs, "c")
	for i := 1; i < 3; i++ {
		if gap := ss[i].start.Sub(ss[i-1].end); gap > 250*time.Millisecond {
			t.Errorf("%s between runs %d and %d, want back to back", gap, i, i+1)
		}
		if ss[i-1].result != result.ResultCompleted {
			t.Errorf("run %d: %s", i, ss[i-1].result)
		}
	}
}

// A continuous probe whose runs fail at once does not spin.
func TestSchedulerContinuousFailureBacksOff(t *testing.T) {
	cfg := schedConfig(t, header+`probes:
  - name: c
    request:
      url: "https://127.0.0.1:1/"
      tls_config: {ca_file: /nonexistent/ca.pem}
    load: {concurrency: [1], step_duration: 200ms}
    schedule: {continuous: true}
`, nil)
	s, obs, _ := startScheduler(t, nil)
	s.Apply(cfg)
	obs.waitUntil(t, 5*time.Second, "a failed run", func(evs []obsEvent) bool { return count(evs, "ended", "c", result.ResultFailed) >= 1 })
	time.Sleep(500 * time.Millisecond)
	if evs, _ := obs.snapshot(); count(evs, "started", "c", "") > 3 {
		t.Errorf("%d failed runs within 0.5s: a failing continuous probe spins", count(evs, "started", "c", ""))
	}
}

// A probe with a control runs the control right after itself, under its
// own reservation of the host.
func TestSchedulerRunsTheControlAfterItsProbe(t *testing.T) {
	a := targetOn(t, "127.0.0.1")
	cfg := schedConfig(t, header+`probes:
  - name: p
    request: {url: "$A/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
    control: c
  - name: c
    request: {url: "$A/delay?ms=1"}
    load: {concurrency: [1, 2], step_duration: 300ms}
`, map[string]string{"A": a})
	s, obs, _ := startScheduler(t, nil)
	s.Apply(cfg)
	evs := obs.waitUntil(t, 10*time.Second, "p's run", func(evs []obsEvent) bool { return count(evs, "ended", "p", "") >= 1 })
	p := spans(evs, "p")[0]
	var last result.Result
	for _, st := range s.Snapshot() {
		if st.Probe.Name == "p" {
			last = *st.Last
		}
	}
	pEnd := last.Started.Add(time.Duration(last.DurationSeconds * float64(time.Second)))
	nested := 0
	for _, c := range spans(evs, "c") {
		switch {
		case !c.start.Before(p.start) && !c.end.IsZero() && !c.end.After(p.end):
			nested++
			if c.start.Before(pEnd) {
				t.Errorf("the control started %s before its probe's ramp ended", pEnd.Sub(c.start))
			}
		case c.end.IsZero() && c.start.Before(p.end), !c.end.IsZero() && overlap(c, p):
			t.Errorf("a run of the control overlapped its probe's run:\n%s", formatEvents(evs))
		}
	}
	if nested != 1 {
		t.Errorf("%d control runs within p's run, want 1:\n%s", nested, formatEvents(evs))
	}
	if last.Result != result.ResultCompleted {
		t.Errorf("p: %s", last.Result)
	}
}

// A scheduler with a store serves the stored results before any run
// ends, and a run canceled by shutdown does not replace them.
func TestSchedulerStoreKeepsResultsAcrossRestarts(t *testing.T) {
	a := targetOn(t, "127.0.0.1")
	dir := t.TempDir()
	store, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))
	completed := started.Add(55*time.Second + 100*time.Millisecond)
	stored := result.Result{Name: "a", Mode: "concurrency", Result: result.ResultCompleted, Started: started, DurationSeconds: 55.1,
		Steps: []result.Step{{Level: 1, Goodput: 99}}, BreakingPoints: result.BreakingPoints{Knee: &result.Point{Level: 1, Throughput: 99}},
		Capacity: &result.Point{Level: 1, Throughput: 99}, Valid: true, Diagnosis: []string{}}
	if err := store.Save([]ProbeState{{Last: &stored, LastCompleted: completed}}); err != nil {
		t.Fatal(err)
	}

	cfg := schedConfig(t, header+`probes:
  - name: a
    request: {url: "$A/work"}
    load: {concurrency: [1, 2], step_duration: 3s}
`, map[string]string{"A": a})
	s, obs, stop := startScheduler(t, store)
	s.Apply(cfg)
	obs.waitUntil(t, 5*time.Second, "the run at start", func(evs []obsEvent) bool { return count(evs, "started", "a", "") == 1 })
	snap := s.Snapshot()
	if len(snap) != 1 || snap[0].Last == nil {
		t.Fatalf("snapshot %+v, want a's stored run", snap)
	}
	if st := snap[0]; !st.Last.Started.Equal(started) || !st.LastCompleted.Equal(completed) || st.Last.BreakingPoints.Knee.Throughput != 99 {
		t.Errorf("restored started %v, last completed %v; want %v, %v", st.Last.Started, st.LastCompleted, started, completed)
	}
	if rs := s.Results(); len(rs) != 2 || rs[0].Result != result.ResultCompleted || rs[1].Result != result.ResultRunning {
		t.Errorf("Results() = %d runs, want the stored one and the one under way", len(rs))
	}

	stop() // cancels the run under way
	states, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || !states[0].Last.Started.Equal(started) || states[0].Last.Result != result.ResultCompleted {
		t.Errorf("after a shutdown mid-run the store holds %+v, want the stored completed run", states[0].Last)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("storage dir holds %d files, want results.json alone", len(entries))
	}
}
