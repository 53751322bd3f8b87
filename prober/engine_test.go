package prober

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// probeFor builds a probe the way a user would: from YAML, with the
// config package's defaults and validation.
func probeFor(t testing.TB, url, load string) *plan.Probe {
	t.Helper()
	return probeWith(t, url, "", load)
}

// probeWith is probeFor with more of the request: request holds whole
// lines, indented as they stand under request.
func probeWith(t testing.TB, url, request, load string) *plan.Probe {
	t.Helper()
	yml := fmt.Sprintf(`allowed_targets: ["127.0.0.*"]
probes:
  - name: p
    request:
      url: %s
      timeout: 1s
%s    load:
%s
`, url, request, indent(load, "      "))
	cfg, err := config.Parse("test.yml", []byte(yml))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yml)
	}
	return cfg.Plans()[0]
}

// mustRun runs p, which must be a valid probe.
func mustRun(tb testing.TB, ctx context.Context, p *plan.Probe, opts Options) result.Result {
	tb.Helper()
	r, err := Run(ctx, p, opts)
	if err != nil {
		tb.Fatalf("Run: %v", err)
	}
	return r
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = prefix + strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n")
}

func demoTarget(t *testing.T, opts target.Options) string {
	t.Helper()
	srv := httptest.NewServer(target.New(opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

func levels(r result.Result) []float64 {
	var ls []float64
	for _, s := range r.Steps {
		ls = append(ls, s.Level)
	}
	return ls
}

func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*want }

func TestRunWorkRampFindsTheKneeAtThePoolSize(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/work", `concurrency: [1, 2, 4, 8, 16, 32]
step_duration: 2s
warmup: 200ms`)
	r := simRun(t, p, Options{}, demo(target.Options{Workers: 4, WorkTime: 20 * time.Millisecond}))

	if r.Ended != result.ResultCompleted || len(r.Steps) != 6 {
		t.Fatalf("result %s with levels %v, want completed with 6 levels; error %q", r.Ended, levels(r), r.Error)
	}
	if k := r.BreakingPoints.Knee; k == nil || k.Level != 4 {
		t.Errorf("knee %+v, want level 4", k)
	}
	if !within(r.PeakThroughput, 200, 0.10) {
		t.Errorf("peak %.1f/s, want within 10%% of 200/s", r.PeakThroughput)
	}
	for i, s := range r.Steps {
		if !within(s.InFlight, s.Level, 0.10) {
			t.Errorf("level %g: Little's-law in-flight %.2f, want within 10%% of the level", s.Level, s.InFlight)
		}
		if s.Level > 4 && s.Latency.P99 <= r.Steps[i-1].Latency.P99 {
			t.Errorf("level %g: p99 %.4fs does not grow past the knee (previous %.4fs)", s.Level, s.Latency.P99, r.Steps[i-1].Latency.P99)
		}
		if s.ErrorRatio != 0 || s.Responses[result.HTTPStatus(200)] != s.Attempts {
			t.Errorf("level %g: error ratio %g, responses %v of %d attempts; want all 200", s.Level, s.ErrorRatio, s.Responses, s.Attempts)
		}
	}
	if r.BreakingPoints.FirstFailure != nil {
		t.Errorf("first failure %+v on a target that never fails", r.BreakingPoints.FirstFailure)
	}
	if !r.Valid {
		t.Errorf("run not valid: %v", r.Diagnosis)
	}
}

func TestRunShedFailsFirstAboveItsLimit(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/shed", `concurrency: [2, 4, 8, 16, 32]
step_duration: 1s`)
	r := simRun(t, p, Options{}, demo(target.Options{}))
	for _, s := range r.Steps {
		if s.Level <= 8 && s.ErrorRatio != 0 {
			t.Errorf("level %g: error ratio %g, want no failure through 8", s.Level, s.ErrorRatio)
		}
	}
	ff := r.BreakingPoints.FirstFailure
	if ff == nil || ff.Level != 16 {
		t.Fatalf("first failure %+v, want level 16; levels %v", ff, levels(r))
	}
	s := r.Steps[3]
	if s.Responses[result.HTTPStatus(503)] == 0 || s.Responses[result.HTTPStatus(503)]+s.Responses[result.HTTPStatus(200)] != s.Attempts {
		t.Errorf("level 16: responses %v errors %v of %d attempts; want the failures as 503", s.Responses, s.Errors, s.Attempts)
	}
	// Shedding keeps serving the 8 it takes: a graceful overload.
	if o := r.Overload; o == nil || o.Grade != result.OverloadGraceful {
		t.Errorf("overload %+v, want graceful: /shed keeps its rate past capacity", o)
	}
}

func TestRunLimitedCountsTheLimiterApartAndNamesTheCap(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/limited", `concurrency: [1, 2, 4]
step_duration: 3s`)
	p.Abort.ErrorRatio = 1
	r := simRun(t, p, Options{}, demo(target.Options{}))
	for _, s := range r.Steps {
		if s.Responses[result.HTTPStatus(429)] == 0 || s.Responses[result.HTTPStatus(503)] != 0 {
			t.Errorf("level %g: responses %v; want 429s and no 503", s.Level, s.Responses)
		}
		// The limiter's windows are wall-clock seconds: a 3s step overlaps four.
		if s.Goodput > 400*4/3.0*1.01 {
			t.Errorf("level %g: goodput %.1f/s above the 400/s limit", s.Level, s.Goodput)
		}
		for _, sec := range s.PerSecond {
			if sec.Success > 2*400 {
				t.Errorf("level %g second %d: %d successes, more than two limiter windows allow", s.Level, sec.Second, sec.Success)
			}
		}
	}
	if !strings.Contains(strings.Join(r.Diagnosis, "\n"), "cap") {
		t.Errorf("diagnosis does not name the cap: %q", r.Diagnosis)
	}
}

func TestRunClosedPortIsRefusedNotHealthy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/"
	l.Close()
	p := probeFor(t, url, `concurrency: [1, 2, 4]
step_duration: 500ms`)
	r := mustRun(t, context.Background(), p, Options{})
	if len(r.Steps) == 0 {
		t.Fatalf("no steps: %+v", r)
	}
	s := r.Steps[0]
	if s.Attempts == 0 || s.Errors["refused"] != s.Attempts || s.ErrorRatio != 1 || s.Throughput != 0 {
		t.Errorf("first level: %d attempts, errors %v, error ratio %g, throughput %g; want every attempt refused",
			s.Attempts, s.Errors, s.ErrorRatio, s.Throughput)
	}
	if ff := r.BreakingPoints.FirstFailure; ff == nil || ff.Level != 1 {
		t.Errorf("first failure %+v, want level 1", ff)
	}
	if r.Ended != result.ResultAborted || len(r.Steps) != 1 {
		t.Errorf("result %s after levels %v; want aborted after the first level", r.Ended, levels(r))
	}
	if r.Capacity != nil {
		t.Errorf("capacity %+v for a dead target", r.Capacity)
	}
}

func TestRunSlowTargetTimesOut(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/slow", `concurrency: [2]
step_duration: 2s`)
	r := simRun(t, p, Options{}, demo(target.Options{}))
	s := r.Steps[0]
	if s.Attempts < 2 || s.Errors["timeout"] != s.Attempts || len(s.Responses) != 0 {
		t.Errorf("%d attempts, errors %v, responses %v; want every attempt a timeout", s.Attempts, s.Errors, s.Responses)
	}
}

// handsOver is a transport whose every answer is a 200 that reaches the
// worker after took, whatever its deadline: a response that came off the
// wire in time, read by a worker that woke late.
type handsOver struct{ took time.Duration }

func (h handsOver) NewConn(*template.Vars) transport.Conn { return h }
func (handsOver) Abort()                                  {}
func (handsOver) Close()                                  {}

func (h handsOver) Do(time.Time) (result.Code, result.Outcome) {
	time.Sleep(h.took)
	return result.HTTPStatus(http.StatusOK), result.Success
}

// An answer handed over at or past the 1s timeout is a timeout, however
// early it came off the wire; one a moment before it is a success.
func TestRunAnswerHandedOverLateIsATimeout(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/", `concurrency: [2]
step_duration: 5s`)
	for _, c := range []struct {
		took    time.Duration
		timeout bool
	}{{time.Second - time.Millisecond, false}, {time.Second, true}, {time.Second + time.Millisecond, true}} {
		var r result.Result
		synctest.Test(t, func(*testing.T) {
			r = run(context.Background(), p, Options{noAlarm: true, cpu: func() time.Duration { return 0 }},
				&request{t: handsOver{c.took}, req: p.Request}, time.Now())
		})
		s := r.Steps[0]
		switch {
		case s.Attempts < 8:
			t.Errorf("handed over after %v: %d attempts in 5s at 2 in flight", c.took, s.Attempts)
		case c.timeout && (s.Errors["timeout"] != s.Attempts || len(s.Responses) != 0):
			t.Errorf("handed over after %v: errors %v, responses %v; want every attempt a timeout", c.took, s.Errors, s.Responses.Named())
		case !c.timeout && (s.Responses[result.HTTPStatus(http.StatusOK)] != s.Attempts || s.Latency.Max != c.took.Seconds()):
			t.Errorf("handed over after %v: responses %v, slowest %vs; want every attempt a success that took it", c.took, s.Responses.Named(), s.Latency.Max)
		}
	}
}

func TestRunStopsWhenCanceled(t *testing.T) {
	// /slow answers after 3s, past the 1s the run is given here: only
	// cutting short the requests under way stops the load within the
	// second, on the lean client (http) as on net/http (https).
	plain := demoTarget(t, target.Options{})
	tlsSrv := httptest.NewTLSServer(target.New(target.Options{}))
	t.Cleanup(tlsSrv.Close)
	for _, tc := range []struct{ name, url string }{
		{"http", plain + "/slow"},
		{"https", tlsSrv.URL + "/slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := probeWith(t, tc.url, "      tls_config: {insecure_skip_verify: true}\n", `concurrency: [1, 2]
step_duration: 30s`)
			p.Request.Timeout = 5 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			r := mustRun(t, ctx, p, Options{})
			if r.Ended != result.ResultCanceled {
				t.Errorf("result %s, want canceled", r.Ended)
			}
			if d := time.Since(start); d > 1300*time.Millisecond {
				t.Errorf("run went on %s after its context ended at 300ms, want its load stopped within a second", d)
			}
		})
	}
}

// TestRunWarmupKeepsThroughputWhole: with a warmup, the responses that
// come inside the window to requests of the warmup count, as the ones still
// under way at the window's end do not: 8 connections to a 400ms route are
// 20 responses per second and 8 in flight, warmup or not.
func TestRunWarmupKeepsThroughputWhole(t *testing.T) {
	t.Parallel()
	for _, warmup := range []string{"0s", "1s"} {
		t.Run("warmup "+warmup, func(t *testing.T) {
			p := probeFor(t, "http://127.0.0.1:1/delay?ms=400", `concurrency: [8]
step_duration: 3s
warmup: `+warmup)
			s := simRun(t, p, Options{}, demo(target.Options{})).Steps[0]
			if !within(s.Throughput, 20, 0.10) || !within(s.InFlight, 8, 0.10) {
				t.Errorf("throughput %.1f/s, in flight %.2f; want 20/s and 8 within 10%%", s.Throughput, s.InFlight)
			}
		})
	}
}

// queueTarget works off every request it accepted, in the order they came,
// one at a time, 50ms each, even those whose client gave up: the behaviour
// that makes a step start on the last one's backlog (docs/design.md, "Settling between steps").
// Each request books the worker's next 50ms and sleeps until they end, so
// the order is that of arrival by construction. A sync.Mutex held for the
// 50ms does not promise it: a request that comes as the lock is released
// can take it ahead of the queue, answer at once and end a settle with the
// queue still there.
func queueTarget() http.Handler {
	var (
		mu   sync.Mutex
		free time.Time // when the worker has done all it accepted
	)
	return http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		if now := time.Now(); free.Before(now) {
			free = now
		}
		free = free.Add(50 * time.Millisecond)
		done := free
		mu.Unlock()
		time.Sleep(time.Until(done))
	})
}

// sharedTarget shares its one worker among every request it accepted, as
// a CPU-bound server does: each needs 50ms of its time, so n at once take
// n × 50ms. A level that starts with more requests at once than fit in the
// timeout gets no response in time, and leaves the target owing all of them.
func sharedTarget() http.Handler {
	type job struct {
		left time.Duration
		done chan struct{}
	}
	var (
		mu   sync.Mutex
		jobs []*job
	)
	var worker sync.Once // runs while it has jobs
	work := func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			<-tick.C
			now := time.Now()
			mu.Lock()
			if n := len(jobs); n > 0 {
				share := now.Sub(last) / time.Duration(n)
				left := jobs[:0]
				for _, j := range jobs {
					if j.left -= share; j.left > 0 {
						left = append(left, j)
					} else {
						close(j.done)
					}
				}
				jobs = left
			}
			last = now
			idle := len(jobs) == 0
			if idle {
				worker = sync.Once{} // the next job starts it again
			}
			mu.Unlock()
			if idle {
				return
			}
		}
	}
	return http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		j := &job{left: 50 * time.Millisecond, done: make(chan struct{})}
		mu.Lock()
		jobs = append(jobs, j)
		worker.Do(func() { go work() })
		mu.Unlock()
		<-j.done
	})
}

// TestRunSettlesBetweenStepsAndAfterTheRamp: level 1 leaves no backlog;
// level 8 and level 16 time out and leave one. The target that shares its
// worker gives no response in time at levels 8 and 16 at all, and still owes
// seconds of work after them.
func TestRunSettlesBetweenStepsAndAfterTheRamp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func() http.Handler
	}{
		{"one request at a time", queueTarget},
		{"one worker shared by all", sharedTarget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := tc.target()
				p := probeFor(t, "http://127.0.0.1:1/", `concurrency: [1, 8, 16]
step_duration: 1s`)
				p.Request.Timeout = 200 * time.Millisecond
				p.Abort.ErrorRatio = 1
				r := simRunIn(p, Options{}, h)
				if len(r.Steps) != 3 {
					t.Fatalf("levels %v, want 3", levels(r))
				}
				if s := r.Steps[1].SettleSeconds; s > 0.1 {
					t.Errorf("settled %.3fs after level 1, which left no backlog", s)
				}
				if s := r.Steps[2].SettleSeconds; s < 0.2 {
					t.Errorf("settled %.3fs after level 8, want the backlog worked off first", s)
				}
				// The next run against this host starts on a target that answers at once.
				start := time.Now()
				conn := simWork(p, h).t.NewConn(template.NewVars(0))
				if _, o := conn.Do(start.Add(time.Minute)); o != result.Success {
					t.Fatalf("a request right after the run: %v", o)
				}
				if d := time.Since(start); d > 150*time.Millisecond {
					t.Errorf("a request right after the run took %s: the run left a backlog behind", d)
				}
				drain()
			})
		})
	}
}

// recordingLive keeps what the engine reports live, for assertions.
type recordingLive struct {
	live.Nop
	mu           sync.Mutex
	maxSendDelay float64
	dropped      int
}

func (l *recordingLive) SendDelay(s float64) {
	l.mu.Lock()
	l.maxSendDelay = max(l.maxSendDelay, s)
	l.mu.Unlock()
}

func (l *recordingLive) Dropped() {
	l.mu.Lock()
	l.dropped++
	l.mu.Unlock()
}

func TestOpenLoopHoldsItsRate(t *testing.T) {
	t.Parallel()
	eachSender(t, func(t *testing.T, loopsFrom float64) {
		p := probeFor(t, "http://127.0.0.1:1/noop", `rate: [1000]
step_duration: 5s`)
		r := simRun(t, p, Options{loopsFrom: loopsFrom}, demo(target.Options{}))
		s := r.Steps[0]
		if !within(float64(s.Attempts)/5, 1000, 0.01) || !within(s.Throughput, 1000, 0.01) {
			t.Errorf("%d attempts, throughput %.1f/s; want 1000/s within 1%%", s.Attempts, s.Throughput)
		}
		if s.Dropped != 0 || s.ErrorRatio != 0 {
			t.Errorf("dropped %d, error ratio %g; want none", s.Dropped, s.ErrorRatio)
		}
	})
}

func TestOpenLoopRateRampFindsTheKnee(t *testing.T) {
	t.Parallel()
	eachSender(t, func(t *testing.T, loopsFrom float64) {
		p := probeFor(t, "http://127.0.0.1:1/work", `rate: [100, 200, 300, 400, 500, 600]
step_duration: 2s`)
		r := simRun(t, p, Options{loopsFrom: loopsFrom}, demo(target.Options{Workers: 4, WorkTime: 10 * time.Millisecond}))
		if len(r.Steps) != 6 {
			t.Fatalf("levels %v, want 6 (%s: %s)", levels(r), r.Ended, r.Error)
		}
		if k := r.BreakingPoints.Knee; k == nil || k.Level != 400 {
			t.Errorf("knee %+v, want 400 req/s", k)
		}
		// Past the knee the target falls behind; the generator still sent
		// every request, so the run is valid and the shortfall is the finding.
		if !r.Valid || !strings.Contains(strings.Join(r.Diagnosis, "\n"), "did not keep up") {
			t.Errorf("valid %v, diagnosis %q; want a valid run naming the shortfall", r.Valid, r.Diagnosis)
		}
		for i, s := range r.Steps {
			if s.Level <= 300 && s.LoadHeldRatio < 0.95 {
				t.Errorf("%g req/s: load held %.2f below capacity", s.Level, s.LoadHeldRatio)
			}
			if s.Level > 400 {
				// The generator still sent every request; fewer came back.
				if s.LoadHeldRatio < 0.95 || s.Throughput >= 0.9*s.Level {
					t.Errorf("%g req/s: load held %.2f, %.0f responses/s; want all sent and below 90%% back past the knee", s.Level, s.LoadHeldRatio, s.Throughput)
				}
				prev := r.Steps[i-1]
				if s.Dropped <= prev.Dropped && s.Latency.P99 <= prev.Latency.P99 {
					t.Errorf("%g req/s: neither drops (%d) nor p99 (%.3fs) rise past the knee", s.Level, s.Dropped, s.Latency.P99)
				}
			}
		}
	})
}

// stallingTarget answers at once, except that every request arriving in
// the second second of its life waits until that second is over.
func stallingTarget() (h http.Handler, arrivals func() []time.Duration) {
	var (
		mu    sync.Mutex
		start time.Time
		seen  []time.Duration
	)
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if start.IsZero() {
			start = time.Now()
		}
		at := time.Since(start)
		seen = append(seen, at)
		mu.Unlock()
		if at >= 2*time.Second && at < 3*time.Second {
			time.Sleep(3*time.Second - at)
		}
	})
	return h, func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), seen...)
	}
}

func TestOpenLoopChargesAStallToEveryRequestDueDuringIt(t *testing.T) {
	t.Parallel()
	eachSender(t, func(t *testing.T, loopsFrom float64) {
		p := probeFor(t, "http://127.0.0.1:1/", `rate: [100]
step_duration: 5s`)
		r := simRun(t, p, Options{loopsFrom: loopsFrom}, func() http.Handler { h, _ := stallingTarget(); return h })
		s := r.Steps[0]
		if s.Latency.P99 < 0.8 || s.Latency.P99 > 1.1 {
			t.Errorf("p99 %.3fs, want near 1s: the stall is charged to the requests due during it", s.Latency.P99)
		}
		if s.Dropped != 0 {
			t.Errorf("dropped %d with room in the pool", s.Dropped)
		}
	})
}

func TestOpenLoopDropsWhatFindsThePoolFull(t *testing.T) {
	t.Parallel()
	eachSender(t, func(t *testing.T, loopsFrom float64) {
		var arrivals func() []time.Duration
		p := probeFor(t, "http://127.0.0.1:1/", `rate: [100]
step_duration: 5s
max_in_flight: 10`)
		live := &recordingLive{}
		r := simRun(t, p, Options{Live: live, loopsFrom: loopsFrom}, func() http.Handler {
			var h http.Handler
			h, arrivals = stallingTarget()
			return h
		})
		s := r.Steps[0]
		// 100 requests are due during the 1s stall; 10 fill the pool, the rest are dropped.
		if s.Dropped < 80 || s.Dropped > 95 || live.dropped != int(s.Dropped) {
			t.Errorf("dropped %d in the step, %d live; want about 90", s.Dropped, live.dropped)
		}
		if s.Attempts+s.Dropped < 495 || s.Attempts+s.Dropped > 505 {
			t.Errorf("%d attempts + %d dropped, want the 500 scheduled", s.Attempts, s.Dropped)
		}
		// Dropped means never sent: no burst reaches the target when the stall ends.
		burst := 0
		for _, at := range arrivals() {
			if at >= 3*time.Second && at < 3*time.Second+50*time.Millisecond {
				burst++
			}
		}
		if burst > 10+6 {
			t.Errorf("%d requests arrived in the 50ms after the stall: dropped requests were sent late in a burst", burst)
		}
	})
}

// senderHolder holds up the open-loop sender of the n-th request once, for
// hold, as it is about to send (its in-flight count goes up first): a
// generator busy elsewhere (GC, a preempted thread) as the engine sees it.
type senderHolder struct {
	recordingLive
	calls atomic.Int64
	n     int64
	hold  time.Duration
}

func (l *senderHolder) InFlight(delta int) {
	if delta > 0 && l.calls.Add(1) == l.n {
		time.Sleep(l.hold)
	}
}

func TestOpenLoopChargesTheGeneratorsOwnLag(t *testing.T) {
	t.Parallel()
	eachSender(t, func(t *testing.T, loopsFrom float64) {
		p := probeFor(t, "http://127.0.0.1:1/noop", `rate: [200]
step_duration: 2s`)
		live := &senderHolder{n: 100, hold: 300 * time.Millisecond}
		r := simRun(t, p, Options{Live: live, loopsFrom: loopsFrom}, demo(target.Options{}))
		if live.maxSendDelay < 0.3 {
			t.Errorf("largest send delay %.3fs, want the 300ms the generator was held up", live.maxSendDelay)
		}
		if m := r.Steps[0].Latency.Max; m < 0.3 {
			t.Errorf("max latency %.3fs from the intended send time, want at least the 300ms lag", m)
		}
	})
}

func TestPhasesReportOneStepPerPhase(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/noop", `phases:
  - {name: warm up, duration: 1s, rate: 50}
  - {name: ramp up, duration: 1s, rate: 50, ramp_to: 150}
  - {name: sustained, duration: 1s, rate: 150}`)
	r := simRun(t, p, Options{}, demo(target.Options{}))
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "warm up,ramp up,sustained" {
		t.Fatalf("steps %q, want one per phase", names)
	}
	if a := r.Steps[1].Attempts; a < 95 || a > 105 {
		t.Errorf("ramp 50→150 over 1s sent %d requests, want about 100", a)
	}
	if r.Mode != plan.ModePhases {
		t.Errorf("mode %q", r.Mode)
	}
}

// A phase whose rate falls to 0 sends what it integrates to and ends.
func TestPhaseRampingDownToZeroEnds(t *testing.T) {
	t.Parallel()
	p := probeFor(t, "http://127.0.0.1:1/noop", `phases:
  - {name: wind down, duration: 1s, rate: 15, ramp_to: 0}`)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		r := simRunIn(p, Options{}, target.New(target.Options{}))
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("a 1s phase ran %s", d)
		}
		if s := r.Steps[0]; s.Attempts != 8 || s.Dropped != 0 {
			t.Errorf("%d attempts, %d dropped; want the 8 that 15→0 req/s over 1s schedules (7.5, rounded up)", s.Attempts, s.Dropped)
		}
		drain()
	})
}

func TestStageOffsetIntegratesTheRate(t *testing.T) {
	tests := []struct {
		st   stage
		n    int
		want time.Duration
	}{
		{stage{level: 100, rampTo: 100, duration: time.Second}, 50, 500 * time.Millisecond},
		{stage{level: 0, rampTo: 200, duration: time.Second}, 100, time.Second}, // N(t) = 100t²
		{stage{level: 0, rampTo: 200, duration: time.Second}, 25, 500 * time.Millisecond},
		{stage{level: 200, rampTo: 0, duration: time.Second}, 100, time.Second},
		// Past the total of a falling rate: the end of the stage, not NaN.
		{stage{level: 3, rampTo: 0, duration: 5 * time.Second}, 8, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := tt.st.offset(tt.n); (got - tt.want).Abs() > time.Microsecond {
			t.Errorf("%+v offset(%d) = %s, want %s", tt.st, tt.n, got, tt.want)
		}
	}
}

// loopbackTargets serves a demo target on each of n loopback addresses,
// 127.0.0.10 upwards: n hosts, as a fleet of probes sees them.
func loopbackTargets(t *testing.T, n int) []string {
	t.Helper()
	urls := make([]string, n)
	for i := range urls {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", 10+i))
		if err != nil {
			t.Fatalf("listening on a second loopback address: %v", err)
		}
		srv := httptest.NewUnstartedServer(target.New(target.Options{}))
		srv.Listener.Close()
		srv.Listener = l
		srv.Start()
		t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	return urls
}

// A run stopped mid-step is canceled, never completed, however the stop
// falls against the pacer's and the workers' own ends of the step. The race
// showed with many runs at once (30 open-loop probes, 24-29 of them saved
// as completed), not with one: so 30, both loops, a few rounds.
func TestRunCutShortIsCanceled(t *testing.T) {
	urls := loopbackTargets(t, 30)
	for _, load := range []string{"rate: [2]\nstep_duration: 10s", "concurrency: [1]\nstep_duration: 10s"} {
		t.Run(strings.Fields(load)[0], func(t *testing.T) {
			for round := range 3 {
				ctx, cancel := context.WithCancel(context.Background())
				var started, ended sync.WaitGroup
				results := make([]result.Result, len(urls))
				for i, u := range urls {
					p := probeFor(t, u+"/delay?ms=5", load)
					var once sync.Once
					started.Add(1)
					ended.Add(1)
					go func() {
						defer ended.Done()
						var err error
						results[i], err = Run(ctx, p, Options{Progress: func(Progress) { once.Do(started.Done) }})
						if err != nil {
							t.Error(err)
						}
					}()
				}
				started.Wait() // every run is inside its step
				cancel()
				ended.Wait()
				for i, r := range results {
					if r.Ended != result.ResultCanceled {
						t.Errorf("round %d, run %d: %s after %.2fs of a 10s step, want canceled", round, i, r.Ended, r.DurationSeconds)
					}
				}
			}
		})
	}
}

// A step's progress is never reported after the step: `run` would print a
// run's last progress line after the next probe's header. The callback is
// slow, as a blocked stderr is, so that a report still under way when the
// run returns shows.
func TestProgressEndsWithItsStep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { progressEndsWithItsStep(t) })
}

func progressEndsWithItsStep(t *testing.T) {
	p := probeFor(t, "http://127.0.0.1:1/noop", "concurrency: [1, 2]\nstep_duration: 300ms")
	var mu sync.Mutex
	var calls []int // the step of every call, appended as each ends
	returned := false
	late := 0
	simRunIn(p, Options{Progress: func(pr Progress) {
		time.Sleep(400 * time.Millisecond) // longer than a step
		mu.Lock()
		defer mu.Unlock()
		if returned {
			late++
		}
		if n := len(calls); n > 0 && calls[n-1] > pr.Step {
			t.Errorf("progress of step %d after step %d's", pr.Step, calls[n-1])
		}
		calls = append(calls, pr.Step)
	}}, target.New(target.Options{}))
	mu.Lock()
	returned = true
	got := slices.Clone(calls)
	mu.Unlock()
	time.Sleep(500 * time.Millisecond) // a report left behind would end now
	mu.Lock()
	defer mu.Unlock()
	if late > 0 {
		t.Errorf("%d progress reports ended after the run returned (steps reported before: %v)", late, got)
	}
	if !slices.Contains(got, 1) || !slices.Contains(got, 2) {
		t.Errorf("progress reported steps %v, want both 1 and 2", got)
	}
}

// attempter is one user of a workload, as the engine drives it, with the
// methods of a Conn.
type attempter struct{ user }

func (a attempter) Do(deadline time.Time) (result.Code, result.Outcome) {
	code, o, _ := a.do(deadline, func(int, result.Outcome, result.Code, time.Time, time.Time, bool) {})
	return code, o
}

func (a attempter) Close() { a.close() }
