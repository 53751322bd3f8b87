package prober

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// guardedProbe builds a probe from YAML with sections (load, guard, ...)
// as a user writes them.
func guardedProbe(t *testing.T, url, sections string) *plan.Probe {
	t.Helper()
	yml := fmt.Sprintf("allowed_targets: [\"127.0.0.1\"]\nprobes:\n  - name: p\n    request: {url: %q, timeout: 1s}\n%s", url, "    "+strings.ReplaceAll(sections, "\n", "\n    "))
	cfg, err := config.Parse("test.yml", []byte(yml))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yml)
	}
	return cfg.Plans()[0]
}

// turningTarget answers 200 at once until `after` past its first request,
// then turn's way; it keeps when the last request arrived.
type turningTarget struct {
	after time.Duration
	turn  func(w http.ResponseWriter)
	first atomic.Int64 // unix ns of the first request
	last  atomic.Int64 // unix ns of the last one
	count atomic.Int64
}

func (tt *turningTarget) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	now := time.Now().UnixNano()
	tt.first.CompareAndSwap(0, now)
	tt.last.Store(now)
	tt.count.Add(1)
	if time.Duration(now-tt.first.Load()) >= tt.after {
		tt.turn(w)
		return
	}
	time.Sleep(time.Millisecond)
}

// turnedAt is when the target turned; lastAfter how long after it the
// last request came.
func (tt *turningTarget) turnedAt() time.Time { return time.Unix(0, tt.first.Load()).Add(tt.after) }
func (tt *turningTarget) lastAfterTurn() time.Duration {
	return time.Unix(0, tt.last.Load()).Sub(tt.turnedAt())
}

// guardLive records the guards' evaluations.
type guardLive struct {
	live.Nop
	mu       sync.Mutex
	values   map[string][]float64
	breaches map[string]int
	errors   map[string]int
	stopped  []time.Time
}

func newGuardLive() *guardLive {
	return &guardLive{values: map[string][]float64{}, breaches: map[string]int{}, errors: map[string]int{}}
}

func (l *guardLive) Guard(name string, v float64, breached bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.values[name] = append(l.values[name], v)
	if breached {
		l.breaches[name]++
	}
}

func (l *guardLive) GuardError(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors[name]++
}

func (l *guardLive) Stopped(run time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = append(l.stopped, run)
}

func TestLiveGuardsStopTheLoadWithinAWindow(t *testing.T) {
	t.Parallel()
	fail := func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) }
	slow := func(http.ResponseWriter) { time.Sleep(60 * time.Millisecond) }
	for _, tc := range []struct {
		name      string
		turn      func(http.ResponseWriter)
		after     time.Duration
		sections  string
		wantGuard string
		whole     []float64 // the levels that ran whole, before the cut one
		cut       float64
	}{
		{"500s two seconds into a level", fail, 2 * time.Second,
			"load: {concurrency: [2, 4], step_duration: 10s}\nguard: {window: 1s, error_ratio: 0.5}",
			plan.GuardErrorRatio, nil, 2},
		{"breaking points before the cut stand", fail, 2500 * time.Millisecond,
			"load: {concurrency: [1, 2, 4], step_duration: 2s}\nguard: {window: 500ms, error_ratio: 0.5, for: 2}",
			plan.GuardErrorRatio, []float64{1}, 2},
		{"open loop", fail, 2 * time.Second,
			"load: {rate: [200, 400], step_duration: 10s}\nguard: {window: 1s, error_ratio: 0.5}",
			plan.GuardErrorRatio, nil, 200},
		{"slow answers", slow, 2 * time.Second,
			"load: {concurrency: [2, 4], step_duration: 10s}\nguard: {window: 1s, latency: {quantile: 0.9, max: 30ms}}",
			plan.GuardLatency, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tt := &turningTarget{after: tc.after, turn: tc.turn}
			live := newGuardLive()
			p := guardedProbe(t, "http://127.0.0.1:1/", tc.sections)
			r := simRun(t, p, Options{Live: live}, func() http.Handler { return tt })

			if r.Ended != result.ResultAborted || r.Abort == nil || r.Abort.By != result.ByLive || r.Abort.Guard != tc.wantGuard {
				t.Fatalf("result %s, abort %+v (%s): want aborted by the live guard %s", r.Ended, r.Abort, r.Error, tc.wantGuard)
			}
			// One window of the new behaviour (twice with for: 2) and the
			// window it started in: the load stops well before the level's end.
			if d := tt.lastAfterTurn(); d > 2*time.Second {
				t.Errorf("last request %s after the target turned, want within 2s", d)
			}
			t.Logf("last request %s after the target turned; abort %+v", tt.lastAfterTurn(), *r.Abort)
			if got := levels(r); len(got) != len(tc.whole)+1 || got[len(got)-1] != tc.cut {
				t.Fatalf("levels %v, want %v then the cut %g (no higher level)", got, tc.whole, tc.cut)
			}
			last := r.Steps[len(r.Steps)-1]
			if !last.Cut || last.DurationSeconds >= time.Duration(p.Load.StepDuration).Seconds() {
				t.Errorf("last step cut=%v over %.2fs: want marked cut, shorter than its level", last.Cut, last.DurationSeconds)
			}
			if r.Abort.Level != tc.cut || r.Abort.AtSeconds <= 0 || r.Abort.AtSeconds > r.DurationSeconds {
				t.Errorf("abort at level %g, %.2fs of %.2fs: want the cut level within the run", r.Abort.Level, r.Abort.AtSeconds, r.DurationSeconds)
			}
			if live.breaches[tc.wantGuard] == 0 {
				t.Errorf("no breach of %s recorded: %v", tc.wantGuard, live.breaches)
			}
			if tc.whole == nil {
				if r.Capacity != nil || r.BreakingPoints.FirstFailure != nil || r.BreakingPoints.LatencyBudget != nil {
					t.Errorf("the cut step was taken for a whole one: capacity %+v, breaking points %+v", r.Capacity, r.BreakingPoints)
				}
			} else if top := tc.whole[len(tc.whole)-1]; r.Capacity == nil || r.Capacity.Level != top ||
				r.BreakingPoints.Knee == nil || r.BreakingPoints.Knee.Level != top || r.BreakingPoints.FirstFailure != nil {
				t.Errorf("capacity %+v, breaking points %+v: want the knee and capacity at the last whole level %g, no failure from the cut step",
					r.Capacity, r.BreakingPoints, top)
			}
		})
	}
}

// standInPrometheus answers /api/v1/query with one series of value(),
// or with the vector series[] when set; it counts every request.
type standInPrometheus struct {
	value   func() string
	series  []string
	queries atomic.Int64
	other   atomic.Int64
}

func (p *standInPrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		p.other.Add(1)
		http.NotFound(w, r)
		return
	}
	p.queries.Add(1)
	series := p.series
	if p.value != nil {
		series = []string{p.value()}
	}
	var parts []string
	for i, v := range series {
		parts = append(parts, fmt.Sprintf(`{"metric":{"pod":"p%d"},"value":[%d,%q]}`, i, time.Now().Unix(), v))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(parts, ","))
}

func TestPrometheusGuardStopsTheLoadWithinAnIntervalOfTheFlip(t *testing.T) {
	t.Parallel()
	tt := &turningTarget{after: time.Hour, turn: func(http.ResponseWriter) {}}
	srv := httptest.NewServer(tt)
	defer srv.Close()
	var flipped atomic.Int64
	prom := &standInPrometheus{value: func() string {
		if at := flipped.Load(); at != 0 && time.Now().UnixNano() >= at {
			return "100"
		}
		return "0"
	}}
	promSrv := httptest.NewServer(prom)
	defer promSrv.Close()
	p := guardedProbe(t, srv.URL, fmt.Sprintf(`load: {concurrency: [2, 4], step_duration: 10s}
guard:
  prometheus:
    url: %s
    interval: 2s
    queries: [{name: target_5xx, query: 'sum(rate(http_requests_total{code=~"5.."}[30s]))', max: 10}]`, promSrv.URL))
	// The flip comes 3s after the first request, off the 2s beat of the
	// evaluations.
	go func() {
		for tt.first.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		flipped.Store(tt.first.Load() + int64(3*time.Second))
	}()
	live := newGuardLive()
	r := mustRun(t, context.Background(), p, Options{Live: live})

	if r.Ended != result.ResultAborted || r.Abort == nil || r.Abort.By != result.ByPrometheus || r.Abort.Guard != "target_5xx" || r.Abort.Value != 100 {
		t.Fatalf("result %s, abort %+v (%s): want aborted by target_5xx at 100", r.Ended, r.Abort, r.Error)
	}
	after := time.Unix(0, tt.last.Load()).Sub(time.Unix(0, flipped.Load()))
	t.Logf("last request %s after the flip; %d queries; abort %+v", after, prom.queries.Load(), *r.Abort)
	if after > 3*time.Second {
		t.Errorf("last request %s after the flip, want within 3s (one interval plus a second)", after)
	}
	if got := levels(r); len(got) != 1 || got[0] != 2 || !r.Steps[0].Cut {
		t.Errorf("levels %v, want the cut first level alone", got)
	}
	// Only the queries: one before the load, then one per interval.
	if n, most := prom.queries.Load(), int64(r.DurationSeconds/2)+2; prom.other.Load() != 0 || n > most || n < 2 {
		t.Errorf("the guard's Prometheus got %d queries (at most %d) and %d other requests", n, most, prom.other.Load())
	}
	if live.breaches["target_5xx"] != 1 || len(live.values["target_5xx"]) < 2 {
		t.Errorf("evaluations %v, breaches %v: want the zeros then one breach", live.values, live.breaches)
	}
}

func TestPrometheusGuardJudgesBeforeAnyLoad(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + closed.Addr().String()
	closed.Close()
	twoSeries := httptest.NewServer(&standInPrometheus{series: []string{"3", "50"}})
	t.Cleanup(twoSeries.Close)
	empty := httptest.NewServer(&standInPrometheus{})
	t.Cleanup(empty.Close)
	for _, tc := range []struct {
		name, url, onError string
		want               result.RunResult
		wantValue          float64
		wantErrors         int
	}{
		{"unreachable, on_error abort", unreachable, "abort", result.ResultAborted, 0, 1},
		{"no sample, on_error abort", empty.URL, "abort", result.ResultAborted, 0, 1},
		{"one series of two above max", twoSeries.URL, "abort", result.ResultAborted, 50, 0},
		{"unreachable, on_error ignore", unreachable, "ignore", result.ResultCompleted, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tt := &turningTarget{after: time.Hour}
			srv := httptest.NewServer(tt)
			defer srv.Close()
			p := guardedProbe(t, srv.URL, fmt.Sprintf(`load: {concurrency: [1], step_duration: 1s}
guard:
  prometheus:
    url: %s
    interval: 2s
    on_error: %s
    queries: [{name: q, query: up, max: 10}]`, tc.url, tc.onError))
			live := newGuardLive()
			r := mustRun(t, context.Background(), p, Options{Live: live})
			if r.Ended != tc.want {
				t.Fatalf("result %s (%s), want %s", r.Ended, r.Error, tc.want)
			}
			if live.errors["q"] < tc.wantErrors {
				t.Errorf("errors counted %v, want at least %d", live.errors, tc.wantErrors)
			}
			if tc.want == result.ResultCompleted {
				return
			}
			if n := tt.count.Load(); n != 0 || len(r.Steps) != 0 {
				t.Errorf("%d requests sent and %d steps: an unhealthy target gets no load", n, len(r.Steps))
			}
			if a := r.Abort; a == nil || a.By != result.ByPrometheus || a.Value != tc.wantValue || a.Level != 1 {
				t.Errorf("abort %+v (errors %v): want by prometheus at %g, naming the first level", a, live.errors, tc.wantValue)
			}
		})
	}
}

// On a replica of a fleet, a run stops within one guard interval plus a
// second once a peer's stop of it shows in the fleet's Prometheus (the
// fleet guard, named so in the abort), and a run its own guard stops is
// exported under its aligned start for the peers to read.
func TestFleetGuardStopsWithItsPeers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		peerStopsAt   time.Duration // after the first request; 0: never
		targetFailsAt time.Duration // after the first request; 0: never
		wantBy        result.AbortBy
		wantGuard     string
	}{
		{"a peer's guard", 2 * time.Second, 0, result.ByPrometheus, fleet.GuardName},
		{"its own guard", 0, 2 * time.Second, result.ByLive, plan.GuardErrorRatio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tt := &turningTarget{after: time.Hour, turn: func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) }}
			if tc.targetFailsAt > 0 {
				tt.after = tc.targetFailsAt
			}
			srv := httptest.NewServer(tt)
			defer srv.Close()
			prom := &standInPrometheus{value: func() string {
				if first := tt.first.Load(); tc.peerStopsAt > 0 && first != 0 && time.Since(time.Unix(0, first)) >= tc.peerStopsAt {
					return "1"
				}
				return "0"
			}}
			promSrv := httptest.NewServer(prom)
			defer promSrv.Close()
			p := guardedProbe(t, srv.URL, `load: {concurrency: [2], step_duration: 10s}
guard: {window: 200ms, error_ratio: 0.5}`)
			align := time.Now().Truncate(time.Millisecond)
			live := newGuardLive()
			r := mustRun(t, context.Background(), p, Options{Live: live, Align: align,
				Fleet: &fleet.Prometheus{Prometheus: plan.Prometheus{URL: promSrv.URL}}})

			if a := r.Abort; r.Ended != result.ResultAborted || a == nil || a.By != tc.wantBy || a.Guard != tc.wantGuard {
				t.Fatalf("result %s, abort %+v (%s): want aborted by the %s guard %s", r.Ended, a, r.Error, tc.wantBy, tc.wantGuard)
			}
			if tc.peerStopsAt > 0 {
				after := time.Unix(0, tt.last.Load()).Sub(time.Unix(0, tt.first.Load()).Add(tc.peerStopsAt))
				if t.Logf("last request %s after the peer's stop showed; %d queries", after, prom.queries.Load()); after > 1200*time.Millisecond {
					t.Errorf("last request %s after the peer's stop showed, want within 1.2s (one 200ms guard interval plus a second)", after)
				}
			}
			if len(live.stopped) == 0 || !live.stopped[0].Equal(align) {
				t.Errorf("stops exported %v, want the run's aligned start %v", live.stopped, align)
			}
		})
	}
}

func TestAbortErrorRatioFillsTheAbort(t *testing.T) {
	t.Parallel()
	unavailable := func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	}
	r := simRun(t, guardedProbe(t, "http://127.0.0.1:1/", "load: {concurrency: [1, 2], step_duration: 500ms}"), Options{}, unavailable)
	if a := r.Abort; r.Ended != result.ResultAborted || a == nil || a.By != result.ByErrorRatio || a.Value != 1 || a.Level != 1 {
		t.Fatalf("result %s, abort %+v: want aborted by error_ratio at 1 after level 1", r.Ended, a)
	}
	if len(r.Steps) != 1 || r.Steps[0].Cut {
		t.Errorf("steps %v: the level abort.error_ratio judged ran whole", levels(r))
	}
}
