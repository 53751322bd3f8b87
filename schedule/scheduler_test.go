package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// The scheduler's tests send no request: a fake runner stands in for the
// load, and testing/synctest's clock for the wall clock, so every time
// below is exact.

// fakeRun is a prober.Runner that sends no load: a run takes one
// step_duration per level of the bubble's clock and completes, or is
// canceled stopTime after ctx ends (a real run takes a moment to cut its
// attempts short), or aborted when ctx ended with a *result.Stop (the
// pause switch), as prober.Run is. A probe named "fails" cannot run: an
// error after 1ms, as from a probe whose client cannot be built.
func fakeRun(ctx context.Context, p *plan.Probe, opts prober.Options) (result.Result, error) {
	if p.Name == "fails" {
		time.Sleep(time.Millisecond) // and a failing probe that spins is caught spinning
		return result.Result{}, errors.New("its client cannot be built")
	}
	r := result.Result{Name: p.Name, Mode: p.Load.Mode(), Started: time.Now(), Steps: []result.Step{}, Diagnosis: []string{}}
	r.Ended = fakeSteps(ctx, p, opts, &r)
	r.DurationSeconds = time.Since(r.Started).Seconds()
	return r, nil
}

const stopTime = 10 * time.Millisecond

func fakeSteps(ctx context.Context, p *plan.Probe, opts prober.Options, r *result.Result) result.RunResult {
	levels := slices.Clone(p.Load.Rate)
	for _, c := range p.Load.Concurrency {
		levels = append(levels, float64(c))
	}
	for i, level := range levels {
		start := time.Now()
		select {
		case <-time.After(time.Duration(p.Load.StepDuration)):
		case <-ctx.Done():
			time.Sleep(stopTime)
			var stop *result.Stop
			if errors.As(context.Cause(ctx), &stop) {
				r.Abort = &stop.Abort
				return result.ResultAborted
			}
			return result.ResultCanceled
		}
		step := result.Step{Level: level, Started: start}
		if opts.Overlapping != nil {
			step.OverlappingRuns = opts.Overlapping(start)
		}
		r.Steps = append(r.Steps, step)
		if opts.OnStep != nil && i < len(levels)-1 {
			partial := *r
			partial.Ended = result.ResultRunning
			opts.OnStep(partial)
		}
	}
	return result.ResultCompleted
}

// fakeLookup resolves localhost to the loopback addresses and an address
// to itself, as the system resolver does, without asking it.
func fakeLookup(_ context.Context, host string) ([]netip.Addr, error) {
	if host == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("no such host %q", host)
	}
	return []netip.Addr{a}, nil
}

// obsEvent is one call the scheduler made on its Observer.
type obsEvent struct {
	kind   string // started, ended, waited, forget
	probe  string
	result result.RunResult // ended
	secs   float64          // waited
	at     time.Duration
}

// recObserver records every Observer call, in order, with the time since
// the bubble began.
type recObserver struct {
	t0     time.Time
	mu     sync.Mutex
	events []obsEvent
}

func (o *recObserver) add(e obsEvent) {
	e.at = time.Since(o.t0)
	o.mu.Lock()
	o.events = append(o.events, e)
	o.mu.Unlock()
}

func (o *recObserver) Live(string) live.Sink { return live.Nop{} }
func (o *recObserver) RunStarted(p string)   { o.add(obsEvent{kind: "started", probe: p}) }
func (o *recObserver) RunEnded(p string, r result.RunResult) {
	o.add(obsEvent{kind: "ended", probe: p, result: r})
}
func (o *recObserver) Waited(p string, seconds float64) {
	o.add(obsEvent{kind: "waited", probe: p, secs: seconds})
}
func (o *recObserver) Forget(p string) { o.add(obsEvent{kind: "forget", probe: p}) }

func (o *recObserver) snapshot() []obsEvent {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.events)
}

func formatEvents(evs []obsEvent) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %8s %-7s %s %s", e.at, e.kind, e.probe, e.result)
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

// span is one run of a probe as the observer saw it; a run still under
// way has end -1.
type span struct {
	start, end time.Duration
	result     result.RunResult
}

// spans pairs the RunStarted and RunEnded calls of probe.
func spans(evs []obsEvent, probe string) []span {
	var ss []span
	for _, e := range evs {
		if e.probe != probe {
			continue
		}
		switch e.kind {
		case "started":
			ss = append(ss, span{start: e.at, end: -1})
		case "ended":
			if n := len(ss); n > 0 && ss[n-1].end < 0 {
				ss[n-1].end, ss[n-1].result = e.at, e.result
			}
		}
	}
	return ss
}

func waited(evs []obsEvent, probe string) []float64 {
	var w []float64
	for _, e := range evs {
		if e.kind == "waited" && e.probe == probe {
			w = append(w, e.secs)
		}
	}
	return w
}

func overlap(a, b span) bool {
	return a.start < b.end && b.start < a.end || a.end < 0 && b.end < 0
}

// schedConfig parses a config whose probes' URLs are written in full.
// Unless it says otherwise, up to 10 ramps run at once: most tests here are
// about hosts, caps and timing, not about max_parallel_runs (parallel_test.go).
func schedConfig(t *testing.T, probes string) *config.Config {
	t.Helper()
	yml := `allowed_targets: ["127.0.0.1", "127.0.0.2", "localhost"]
` + probes
	if !strings.Contains(probes, "max_parallel_runs") {
		yml = "max_parallel_runs: 10\n" + yml
	}
	cfg, err := config.Parse("sched.yml", []byte(yml))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yml)
	}
	return cfg
}

// bubble runs f in a synctest bubble with a scheduler built with o, which
// runs probes with fakeRun (unless o names a runner), logs nothing
// (unless o names a logger) and tells a recObserver, and stops it at the
// end; synctest.Test fails if any of its goroutines outlives the stop.
func bubble(t *testing.T, o Options, f func(t *testing.T, s *Scheduler, obs *recObserver)) {
	synctest.Test(t, func(t *testing.T) {
		obs := &recObserver{t0: time.Now()}
		ctx, cancel := context.WithCancel(context.Background())
		o.Observer = obs
		if o.Run == nil {
			o.Run = fakeRun
		}
		if o.Logger == nil {
			o.Logger = discardLogger
		}
		s, err := New(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		s.lookup = fakeLookup
		f(t, s, obs)
		cancel()
		s.Wait()
	})
}

// after lets d of the bubble's clock pass, then waits for every goroutine
// to be idle.
func after(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

var discardLogger = slog.New(slog.DiscardHandler)

func probeState(t *testing.T, s *Scheduler, probe string) state.Probe {
	t.Helper()
	for _, st := range s.Snapshot() {
		if st.Probe.Name == probe {
			return st
		}
	}
	t.Fatalf("%s is not in the snapshot", probe)
	return state.Probe{}
}

const twoProbes = `probes:
  - name: a
    request: {url: "%s/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
  - name: b
    request: {url: "%s/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
`

// Two probes against one host never run at once: the second waits for the
// whole first run, and the wait is reported. 127.0.0.1 and localhost are
// one host, and so are two ports of it. Probes against two hosts run
// together, and neither waits.
func TestSchedulerHostExclusivity(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		oneHost    bool
	}{
		{"same URL", "http://127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"another port", "http://127.0.0.1:8080", "http://127.0.0.1:9090", true},
		{"localhost is 127.0.0.1", "http://127.0.0.1:8080", "http://localhost:8080", true},
		{"two hosts", "http://127.0.0.1:8080", "http://127.0.0.2:8080", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, fmt.Sprintf(twoProbes, tc.a, tc.b)))
				after(2 * time.Second)
				evs := obs.snapshot()
				sa, sb := spans(evs, "a"), spans(evs, "b")
				if len(sa) != 1 || len(sb) != 1 || sa[0].result != result.ResultCompleted || sb[0].result != result.ResultCompleted {
					t.Fatalf("want one completed run of each:\n%s", formatEvents(evs))
				}
				first, later := "a", "b"
				if sb[0].start < sa[0].start {
					first, later = "b", "a"
				}
				wantWait := []float64{0}
				if tc.oneHost {
					wantWait = []float64{0.6} // the first's two steps
				}
				if w := waited(evs, later); !slices.Equal(w, wantWait) {
					t.Errorf("%s waited %v, want %v:\n%s", later, w, wantWait, formatEvents(evs))
				}
				if w := waited(evs, first); !slices.Equal(w, []float64{0}) {
					t.Errorf("%s waited %v with nothing in its way", first, w)
				}
				if overlap(sa[0], sb[0]) == tc.oneHost {
					t.Errorf("runs overlapped: %v, want %v:\n%s", overlap(sa[0], sb[0]), !tc.oneHost, formatEvents(evs))
				}
			})
		})
	}
}

// The sum of running concurrency (rate) never exceeds max_concurrency
// (max_rate): two probes that together exceed the cap take turns even on
// different hosts.
func TestSchedulerCaps(t *testing.T) {
	for _, tc := range []struct{ name, yml string }{
		{"max_concurrency", `max_concurrency: 4
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [2, 4], step_duration: 300ms}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 4], step_duration: 300ms}
`},
		{"max_rate", `max_rate: 100
probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {rate: [50, 100], step_duration: 300ms}
  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {rate: [60, 60.5], step_duration: 300ms}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, tc.yml))
				after(2 * time.Second)
				evs := obs.snapshot()
				sa, sb := spans(evs, "a"), spans(evs, "b")
				if len(sa) != 1 || len(sb) != 1 || overlap(sa[0], sb[0]) {
					t.Fatalf("want one run of each, one after the other:\n%s", formatEvents(evs))
				}
				later := "b"
				if sb[0].start < sa[0].start {
					later = "a"
				}
				if w := waited(evs, later); !slices.Equal(w, []float64{0.6}) {
					t.Errorf("%s waited %v, want the other's whole run, 0.6s", later, w)
				}
			})
		})
	}
}

// A ramp against the host of a continuous canary gets its turn after the
// canary's run under way: the canary asks again the moment its run ends
// but does not jump the queue. Otherwise the canary runs back to back.
func TestSchedulerContinuousProbeDoesNotStarveAnother(t *testing.T) {
	bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, `probes:
  - name: canary
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1], step_duration: 200ms}
    schedule: {continuous: true}
  - name: ramp
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 200ms}
`))
		after(2 * time.Second)
		evs := obs.snapshot()
		canary, ramp := spans(evs, "canary"), spans(evs, "ramp")
		if len(ramp) != 1 || ramp[0].start > 200*time.Millisecond {
			t.Fatalf("the ramp did not run right after the canary's first run:\n%s", formatEvents(evs))
		}
		for i, c := range canary {
			if overlap(c, ramp[0]) {
				t.Errorf("canary and ramp overlapped on one host:\n%s", formatEvents(evs))
			}
			// Back to back, or right after the ramp when it ran between.
			if i > 0 && c.start != canary[i-1].end && c.start != ramp[0].end {
				t.Errorf("the canary idled from %s to %s between runs %d and %d", canary[i-1].end, c.start, i, i+1)
			}
		}
		if len(canary) < 6 {
			t.Errorf("%d canary runs in 2s of 200ms runs and one 400ms ramp, want back to back:\n%s", len(canary), formatEvents(evs))
		}
	})
}

// A probe runs at start, then every interval after its last start, plus
// a jitter below schedule.jitter; state.Probe.Next says when, and Trigger
// starts a run at once (triggers during a run add up to one run).
func TestSchedulerIntervalJitterAndTrigger(t *testing.T) {
	for _, jitter := range []time.Duration{0, 10 * time.Second} {
		t.Run(fmt.Sprint("jitter ", jitter), func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				if err := s.Trigger("a"); !errors.Is(err, ErrUnknownProbe) {
					t.Errorf("Trigger before any config = %v, want ErrUnknownProbe", err)
				}
				s.Apply(schedConfig(t, fmt.Sprintf(`probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1], step_duration: 1s}
    schedule: {interval: 1m, jitter: %s}
`, jitter)))
				if err := s.Trigger("nope"); !errors.Is(err, ErrUnknownProbe) {
					t.Errorf("Trigger(nope) = %v, want ErrUnknownProbe", err)
				}
				var nexts []time.Duration
				for range 4 {
					after(time.Second + time.Millisecond) // past a run's end
					nexts = append(nexts, probeState(t, s, "a").Next.Sub(obs.t0))
					after(time.Until(obs.t0.Add(nexts[len(nexts)-1])))
				}
				ss := spans(obs.snapshot(), "a")
				jittered := false
				for i := 1; i < len(ss); i++ {
					gap := ss[i].start - ss[i-1].start
					extra := gap - time.Minute
					if extra < 0 || extra > 0 && extra >= jitter || ss[i].start != nexts[i-1] {
						t.Errorf("run %d started %s after the one before, at %s; want 1m plus under %s, at Next %s", i+1, gap, ss[i].start, jitter, nexts[i-1])
					}
					jittered = jittered || extra > 0
				}
				if jitter > 0 && !jittered {
					t.Errorf("runs every minute exactly: no jitter")
				}

				asked := time.Since(obs.t0) + 10*time.Second
				after(10 * time.Second)
				if err := s.Trigger("a"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				s.Trigger("a") // during the triggered run: one more after it
				s.Trigger("a")
				after(5 * time.Second)
				ss = spans(obs.snapshot(), "a")
				if n := len(ss); n != 7 || ss[5].start != asked || ss[6].start != asked+time.Second {
					t.Errorf("after three triggers at %s: runs %+v, want two more, back to back", asked, ss[4:])
				}
			})
		})
	}
}

// A continuous probe runs back to back; one whose run fails retries
// failedRetry after its last start instead of spinning.
func TestSchedulerContinuous(t *testing.T) {
	for _, tc := range []struct {
		probe  string
		result result.RunResult
		next   func(prev span) time.Duration
	}{
		{"c", result.ResultCompleted, func(prev span) time.Duration { return prev.end }},
		{"fails", result.ResultFailed, func(prev span) time.Duration { return prev.start + failedRetry }},
	} {
		t.Run(tc.probe, func(t *testing.T) {
			bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
				s.Apply(schedConfig(t, `probes:
  - name: `+tc.probe+`
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1], step_duration: 200ms}
    schedule: {continuous: true}
`))
				after(2*failedRetry + time.Second)
				ss := spans(obs.snapshot(), tc.probe)
				if len(ss) < 3 {
					t.Fatalf("%d runs, want at least 3: %+v", len(ss), ss)
				}
				for i := 1; i < 3; i++ {
					if ss[i-1].result != tc.result || ss[i].start != tc.next(ss[i-1]) {
						t.Errorf("run %d %s, the next at %s; want %s, the next at %s", i, ss[i-1].result, ss[i].start, tc.result, tc.next(ss[i-1]))
					}
				}
			})
		})
	}
}

// A reload leaves an unchanged probe's run alone, cancels a changed one's
// at once (RunEnded "canceled") and starts it again with its new config
// once the old run has ended. A canceled run is no result.
func TestSchedulerReloadMidRun(t *testing.T) {
	const a = `  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 700ms}
`
	const b = `  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 2], step_duration: %s}
`
	bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, "probes:\n"+a+fmt.Sprintf(b, "3s")))
		after(200 * time.Millisecond)
		aStarted := probeState(t, s, "a").Current.Started
		s.Apply(schedConfig(t, "probes:\n"+a+fmt.Sprintf(b, "300ms")))
		if st := probeState(t, s, "a"); st.Current == nil || !st.Current.Started.Equal(aStarted) {
			t.Errorf("a's run under way changed at the reload")
		}
		after(3 * time.Second)
		evs := obs.snapshot()
		sa, sb := spans(evs, "a"), spans(evs, "b")
		want := []span{{0, 1400 * time.Millisecond, result.ResultCompleted}}
		if !slices.Equal(sa, want) {
			t.Errorf("a: runs %+v, want %+v, untouched by the reload", sa, want)
		}
		reload := 200 * time.Millisecond
		want = []span{{0, reload + stopTime, result.ResultCanceled}, {reload + stopTime, reload + stopTime + 600*time.Millisecond, result.ResultCompleted}}
		if !slices.Equal(sb, want) {
			t.Errorf("b: runs %+v, want %+v: canceled at the reload, then run anew", sb, want)
		}
		for _, st := range s.Snapshot() {
			if st.Last == nil || st.Last.Ended != result.ResultCompleted {
				t.Errorf("%s's last run is %+v, want a completed one (a canceled run is no result)", st.Probe.Name, st.Last)
			}
		}
		if st := probeState(t, s, "b"); time.Duration(st.Probe.Load.StepDuration) != 300*time.Millisecond || !st.Last.Started.Equal(obs.t0.Add(200*time.Millisecond+stopTime)) {
			t.Errorf("b's last run started %v with step_duration %s, want the reloaded probe's run", st.Last.Started, st.Probe.Load.StepDuration)
		}
	})
}

// A removed probe's run is canceled and its series forgotten after its
// last word: nothing is reported about it after Forget. Removed and added
// back before its old run ended, it is not forgotten: it runs.
func TestSchedulerRemovedProbe(t *testing.T) {
	const onlyA = `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1], step_duration: 300ms}
`
	both := onlyA + `  - name: b
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1, 2], step_duration: 3s}
`
	bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, both))
		after(time.Second)
		s.Apply(schedConfig(t, onlyA))
		if err := s.Trigger("b"); !errors.Is(err, ErrUnknownProbe) {
			t.Errorf("Trigger of a removed probe = %v, want ErrUnknownProbe", err)
		}
		for _, st := range s.Snapshot() {
			if st.Probe.Name == "b" {
				t.Error("the removed probe is still in the snapshot")
			}
		}
		after(10 * time.Second)
		evs := obs.snapshot()
		var b []string
		for _, e := range evs {
			if e.probe == "b" {
				b = append(b, e.kind+" "+string(e.result))
			}
		}
		if want := []string{"waited ", "started ", "ended canceled", "forget "}; !slices.Equal(b, want) {
			t.Errorf("b: %q, want %q", b, want)
		}
		if count(evs, "forget", "a", "") != 0 {
			t.Error("the unchanged probe a was forgotten")
		}

		s.Apply(schedConfig(t, both))
		synctest.Wait()
		s.Apply(schedConfig(t, onlyA))
		s.Apply(schedConfig(t, both))
		after(time.Second)
		evs = obs.snapshot()
		if n, ss := count(evs, "forget", "b", ""), spans(evs, "b"); n != 1 || len(ss) != 3 || ss[2].end >= 0 {
			t.Errorf("b forgotten %d times with runs %+v, want once and a third run under way:\n%s", n, ss, formatEvents(evs))
		}
	})
}

// A probe with a control runs the control right after its ramp, under its
// own reservation: no other run takes the control's host meanwhile, and
// the probe's run shows as running until the control ends.
func TestSchedulerRunsTheControlAfterItsProbe(t *testing.T) {
	bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, `probes:
  - name: p
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 300ms}
    control: c
  - name: c
    request: {url: "http://127.0.0.2/delay"}
    load: {concurrency: [1, 2], step_duration: 300ms}
`))
		// c's own run may go first: it takes the host p's control needs.
		var p []span
		for len(p) == 0 {
			after(100 * time.Millisecond)
			p = spans(obs.snapshot(), "p")
		}
		after(p[0].start + 900*time.Millisecond - time.Since(obs.t0)) // in the control's run
		if cur := probeState(t, s, "p").Current; cur == nil || cur.Ended != result.ResultRunning || len(cur.Steps) != 2 {
			t.Errorf("during its control p shows %+v, want its two steps, running", cur)
		}
		after(2 * time.Second)
		evs := obs.snapshot()
		p = spans(evs, "p")
		ramp := probeState(t, s, "p").Last
		rampEnd := ramp.Started.Add(time.Duration(ramp.DurationSeconds * float64(time.Second))).Sub(obs.t0)
		nested := 0
		for _, c := range spans(evs, "c") {
			switch {
			case c.start == rampEnd && c.end == p[0].end:
				nested++
			case overlap(c, p[0]):
				t.Errorf("a run of the control overlapped its probe's run:\n%s", formatEvents(evs))
			}
		}
		if nested != 1 || ramp.Ended != result.ResultCompleted || rampEnd != p[0].start+600*time.Millisecond {
			t.Errorf("%d control runs from the ramp's end to the run's end, want 1; p %s:\n%s", nested, ramp.Ended, formatEvents(evs))
		}
	})
}

// A scheduler with a store serves the stored results before any run
// ends; a run canceled by shutdown does not replace them, a completed one
// does.
func TestSchedulerStoreKeepsResultsAcrossRestarts(t *testing.T) {
	store, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))
	completed := started.Add(55*time.Second + 100*time.Millisecond)
	stored := result.Result{Name: "a", Mode: "concurrency", Ended: result.ResultCompleted, Started: started, DurationSeconds: 55.1,
		Steps: []result.Step{{Level: 1, Goodput: 99}}, BreakingPoints: result.BreakingPoints{Knee: &result.Point{Level: 1, Throughput: 99}},
		Capacity: &result.Point{Level: 1, Throughput: 99}, Valid: true, Diagnosis: []string{}}
	if err := store.Save([]state.Probe{{Last: &stored, LastCompleted: completed}}); err != nil {
		t.Fatal(err)
	}
	cfg := `probes:
  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 3s}
`
	bubble(t, Options{Store: store}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, cfg))
		after(time.Second)
		st := probeState(t, s, "a")
		if st.Last == nil || !st.Last.Started.Equal(started) || !st.LastCompleted.Equal(completed) || st.Last.BreakingPoints.Knee.Throughput != 99 {
			t.Errorf("restored %+v, last completed %v; want the stored run, completed at %v", st.Last, st.LastCompleted, completed)
		}
		if rs := s.Results(); len(rs) != 2 || rs[0].Ended != result.ResultCompleted || rs[1].Ended != result.ResultRunning {
			t.Errorf("Results() = %d runs, want the stored one and the one under way", len(rs))
		}
	})
	// The bubble's end canceled the run under way.
	if states, err := store.Load(); err != nil || len(states) != 1 || !states[0].Last.Started.Equal(started) {
		t.Errorf("after a shutdown mid-run the store holds %+v, %v; want the stored run", states, err)
	}

	bubble(t, Options{Store: store}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		s.Apply(schedConfig(t, cfg))
		after(7 * time.Second)
	})
	if states, err := store.Load(); err != nil || len(states) != 1 || states[0].Last.Started.Equal(started) || states[0].Last.Ended != result.ResultCompleted {
		t.Errorf("after a completed run the store holds %+v, %v; want that run", states, err)
	}
}

// No goroutine outlives its probe once a reload removes it (bubble checks
// the same once the scheduler's context ends).
func TestSchedulerLeavesNoGoroutines(t *testing.T) {
	bubble(t, Options{}, func(t *testing.T, s *Scheduler, obs *recObserver) {
		ignore := goleak.IgnoreCurrent()
		cfg := schedConfig(t, `probes:
  - name: ramp
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 200ms}
    control: canary
  - name: canary
    request: {url: "http://127.0.0.2/work"}
    load: {concurrency: [1], step_duration: 200ms}
    schedule: {continuous: true}
`)
		s.Apply(cfg)
		after(300 * time.Millisecond) // the ramp mid-step, the canary's second run under way
		s.Apply(&config.Config{MaxConcurrency: cfg.MaxConcurrency, MaxRate: cfg.MaxRate})
		after(time.Second)
		if evs := obs.snapshot(); count(evs, "forget", "ramp", "") != 1 || count(evs, "forget", "canary", "") != 1 {
			t.Errorf("the removed probes were not forgotten:\n%s", formatEvents(evs))
		}
		if err := goleak.Find(ignore); err != nil {
			t.Errorf("goroutines outlive the probes a reload removed: %v", err)
		}
	})
}
