package target

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The demo target's fixed behaviours; see docs/commands.md, "The demo target".
const (
	DefaultWorkers  = 4                     // /work pool size
	DefaultWorkTime = 10 * time.Millisecond // /work hold time

	ShedMaxInFlight     = 8                      // /shed: 503 above this many in flight
	ShedWorkTime        = 5 * time.Millisecond   // /shed: time to answer when not shedding
	LimitedRate         = 400                    // /limited: 200s per wall-clock second
	LeakBudget          = 3000                   // /leak: 200s before it only answers 503
	FlakyRatio          = 0.3                    // /flaky: share of requests answered 503, at random
	SlowDelay           = 3 * time.Second        // /slow: time to answer
	MaxDelay            = 60 * time.Second       // /delay: largest ms accepted
	targetShutdownGrace = 900 * time.Millisecond // in-flight requests get this long after ctx is done
)

// Options configures the demo target.
type Options struct {
	Workers  int           // /work pool size; <= 0 means DefaultWorkers
	WorkTime time.Duration // /work hold time; <= 0 means DefaultWorkTime
	CPU      bool          // --work=cpu: spend WorkTime computing instead of sleeping
}

// Target is the demo target: an http.Handler reproducing the behaviours
// loadprobe measures (a worker-pool knee, shedding, a rate cap, a depleting
// resource, slow and failing answers). A zero Target is not usable; use
// New. Its per-request paths take no locks and do not log.
type Target struct {
	workers  int
	workTime time.Duration
	cpu      bool

	// epoch is the origin of the monotonic nanosecond times in slots.
	epoch time.Time
	// slots is the /work pool, one token per free worker.
	slots chan targetSlot
	// collapse is the /collapse pool, as large as the /work pool.
	collapse chan struct{}
	index    []byte
	shop     shop

	_        [64]byte // keep the hot counters off each other's cache lines
	shedBusy atomic.Int64
	_        [56]byte
	// scaleBusy counts the /scale requests in flight.
	scaleBusy atomic.Int64
	_         [56]byte
	leakUsed  atomic.Uint64
	_         [56]byte
	limit     targetWindow
	_         [56]byte
	cpuSink   atomic.Uint64 // keeps the --work=cpu loop from being optimised away
	// wsSessions counts the open /ws-limited sessions.
	wsSessions atomic.Int64
	ws         wsOpen         // the open sessions of /ws and /ws-limited
	metrics    *targetMetrics // its own /metrics (metrics.go)
}

// New returns a demo target with a fresh state: an idle pool, nothing
// leaked and an empty rate window.
func New(opts Options) *Target {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.WorkTime <= 0 {
		opts.WorkTime = DefaultWorkTime
	}
	t := &Target{
		workers:  opts.Workers,
		workTime: opts.WorkTime,
		cpu:      opts.CPU,
		epoch:    time.Now(),
		slots:    make(chan targetSlot, opts.Workers),
		collapse: make(chan struct{}, opts.Workers),
		shop:     newShop(),
	}
	t.metrics = newTargetMetrics(t.Workers)
	for range opts.Workers {
		t.slots <- targetSlot{}
		t.collapse <- struct{}{}
	}
	t.index = []byte(t.indexText())
	return t
}

func (t *Target) indexText() string {
	kind := "sleeping"
	if t.cpu {
		kind = "computing"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "loadprobe demo target\n\n")
	row := func(route, what string) { fmt.Fprintf(&b, "%-15s %s\n", route, what) }
	row("/noop", "200 at once, no work")
	row("/work", fmt.Sprintf("holds one of %d workers for %v (%s), queueing when all are busy: at most %.0f req/s",
		t.workers, t.workTime, kind, float64(t.workers)/t.workTime.Seconds()))
	row("/shed", fmt.Sprintf("503 when more than %d requests are in flight, else 200 after %v", ShedMaxInFlight, ShedWorkTime))
	row("/limited", fmt.Sprintf("200 for the first %d requests of each wall-clock second, 429 for the rest", LimitedRate))
	row("/leak", fmt.Sprintf("200 for the first %d requests, then 503 for good", LeakBudget))
	row("/flaky", fmt.Sprintf("503 for %.0f%% of requests at random, else 200 at once", 100*FlakyRatio))
	row("/collapse", fmt.Sprintf("holds one of %d workers for a random time (%v on average, %s), queueing when all are busy, and finishes the job even when the client gave up",
		t.workers, t.workTime, kind))
	row("/scale", fmt.Sprintf("200 after a time that makes N connections follow the scalability law (σ %g, κ %g, λ %g/s: peak near %.0f connections)",
		ScaleSigma, ScaleKappa, ScaleLambda, math.Sqrt((1-ScaleSigma)/ScaleKappa)))
	row("/slow", fmt.Sprintf("200 after %v", SlowDelay))
	row("/delay?ms=N", fmt.Sprintf("200 after N milliseconds (0..%d)", MaxDelay.Milliseconds()))
	row("/status?code=N", "answers with status N (200..599)")
	row("/ws", "WebSocket: echoes every message")
	row("/ws-limited", fmt.Sprintf("WebSocket: echoes, holding at most %d sessions; closes any beyond with 1013 (try again later)", TargetWSSessions))
	row("/login", fmt.Sprintf(`POST {"user": "name"}: {"token": "..."} after %v`, ShopLoginWork))
	row("/items/{id}", "200 with a token from /login (Authorization: Bearer <token>), 401 without")
	row("/metrics", "the target's own Prometheus metrics: http_requests_total{route,code}, http_requests_in_flight")
	return b.String()
}

// targetReply is a precomputed tiny response.
type targetReply struct {
	code   int
	body   []byte
	length []string
	extra  string   // one optional header's canonical name
	value  []string // and its value
}

func newTargetReply(code int, body string, extra ...string) *targetReply {
	r := &targetReply{code: code, body: []byte(body), length: []string{strconv.Itoa(len(body))}}
	if len(extra) == 2 {
		r.extra, r.value = http.CanonicalHeaderKey(extra[0]), []string{extra[1]}
	}
	return r
}

var (
	targetTextPlain = []string{"text/plain; charset=utf-8"}

	targetOK       = newTargetReply(http.StatusOK, "ok\n")
	targetShed     = newTargetReply(http.StatusServiceUnavailable, "overloaded: shedding\n")
	targetLimited  = newTargetReply(http.StatusTooManyRequests, "rate limited\n", "Retry-After", "1")
	targetLeaked   = newTargetReply(http.StatusServiceUnavailable, "resource exhausted\n")
	targetCanceled = newTargetReply(http.StatusServiceUnavailable, "canceled\n")
	targetNotFound = newTargetReply(http.StatusNotFound, "not found; see / for the routes\n")
)

func (rp *targetReply) write(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = targetTextPlain
	h["Content-Length"] = rp.length
	if rp.extra != "" {
		h[rp.extra] = rp.value
	}
	w.WriteHeader(rp.code)
	_, _ = w.Write(rp.body)
}

func targetText(w http.ResponseWriter, code int, body string) {
	h := w.Header()
	h["Content-Type"] = targetTextPlain
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}

// Workers reads the /work pool: its workers holding a job now, and its
// size.
func (t *Target) Workers() (busy, size int) { return t.workers - len(t.slots), t.workers }

// ServeHTTP serves the demo routes, counted in its own metrics, and those
// metrics on /metrics; any method is accepted.
func (t *Target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		t.metrics.handler.ServeHTTP(w, r)
		return
	}
	t.metrics.counted(w, r, t.serve)
}

func (t *Target) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/noop":
		targetOK.write(w)
	case "/work":
		t.serveWork(w, r)
	case "/shed":
		t.serveShed(w)
	case "/limited":
		if t.limit.allow(time.Now().Unix()) {
			targetOK.write(w)
		} else {
			targetLimited.write(w)
		}
	case "/leak":
		// Load first: once depleted, the counter is no longer written.
		if t.leakUsed.Load() >= LeakBudget || t.leakUsed.Add(1) > LeakBudget {
			targetLeaked.write(w)
		} else {
			targetOK.write(w)
		}
	case "/flaky":
		if rand.Float64() < FlakyRatio {
			targetShed.write(w)
		} else {
			targetOK.write(w)
		}
	case "/collapse":
		t.serveCollapse(w)
	case "/scale":
		t.serveScale(w, r)
	case "/slow":
		targetWait(w, r, SlowDelay)
	case "/delay":
		ms, err := strconv.ParseInt(r.URL.Query().Get("ms"), 10, 64)
		if err != nil || ms < 0 || ms > MaxDelay.Milliseconds() {
			targetText(w, http.StatusBadRequest, fmt.Sprintf("ms must be an integer from 0 to %d\n", MaxDelay.Milliseconds()))
			return
		}
		targetWait(w, r, time.Duration(ms)*time.Millisecond)
	case "/status":
		code, err := strconv.Atoi(r.URL.Query().Get("code"))
		if err != nil || code < 200 || code > 599 {
			targetText(w, http.StatusBadRequest, "code must be an integer from 200 to 599\n")
			return
		}
		if code == http.StatusNoContent || code == http.StatusNotModified {
			w.WriteHeader(code) // no body allowed
			return
		}
		targetText(w, code, strconv.Itoa(code)+" "+http.StatusText(code)+"\n")
	case "/ws":
		t.serveWS(w, r, false)
	case "/ws-limited":
		t.serveWS(w, r, true)
	case "/":
		h := w.Header()
		h["Content-Type"] = targetTextPlain
		h["Content-Length"] = []string{strconv.Itoa(len(t.index))}
		_, _ = w.Write(t.index)
	case "/login":
		t.shop.login(w, r)
	default:
		if strings.HasPrefix(r.URL.Path, "/items/") {
			t.shop.item(w, r)
			return
		}
		targetNotFound.write(w)
	}
}

// serveWork holds one pool slot for the work time.
//
// Each slot runs on an ideal timeline: a job starts when it arrives or when
// its slot was due to be free, whichever is later, and the slot is due again
// exactly one work time after that, so a saturated pool completes exactly
// workers/workTime jobs per second. Go's timers fire late: at idle, Linux
// rounds a sleep up to whole milliseconds and adds the wake-up, ~0.2 ms for
// 10 ms and up to 1.2 ms for other lengths. A slot therefore also carries how
// late its last job woke, and the next job on it starts that much earlier
// (by at most the work time), so a lone job, too, holds its worker for
// the work time on average instead of work time plus the timer's lateness —
// otherwise the pool's level (4 clients on 4 workers) would reach only ~95%
// of the peak, right on the knee rule's threshold.
func (t *Target) serveWork(w http.ResponseWriter, r *http.Request) {
	if t.work(r.Context().Done()) {
		targetOK.write(w)
	} else {
		targetCanceled.write(w)
	}
}

// work holds one pool slot for the work time, as serveWork says, and
// reports true; false when done closed while it queued for a slot.
func (t *Target) work(done <-chan struct{}) bool {
	arrived := t.now()
	var slot targetSlot
	select {
	case slot = <-t.slots:
	default:
		select {
		case slot = <-t.slots:
		case <-done: // the client left while queued: give up
			return false
		}
	}
	end := max(slot.due, arrived-slot.late) + int64(t.workTime)
	if t.cpu {
		t.compute(end)
	} else if d := end - t.now(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	// Lateness beyond a whole job (a stalled process) is not made up.
	t.slots <- targetSlot{due: end, late: min(max(t.now()-end, 0), int64(t.workTime))}
	return true
}

// serveCollapse holds one /collapse worker for a random time, exponential
// with a mean of the work time (at most five times it: at 10 ms a lone job
// ends well inside a 100 ms client timeout), and finishes the job
// whether or not the client is still waiting, as most servers do: nothing
// tells a handler busy computing that its client left. Past the knee, once
// the queue's wait passes the client's timeout, ever more of the pool's
// time goes to answers nobody reads: the pool stays busy while goodput
// falls, the overload collapse of the reference ramp in docs/design.md.
func (t *Target) serveCollapse(w http.ResponseWriter) {
	<-t.collapse
	d := int64(min(rand.ExpFloat64(), 5) * float64(t.workTime))
	if t.cpu {
		t.compute(t.now() + d)
	} else {
		time.Sleep(time.Duration(d))
	}
	t.collapse <- struct{}{}
	targetOK.write(w)
}

// targetSlot is a free /work worker: when its last job was due to end and how
// late it actually ended, in ns since the Target's epoch.
type targetSlot struct{ due, late int64 }

// now is the monotonic time since the Target's epoch, in ns.
func (t *Target) now() int64 { return int64(time.Since(t.epoch)) }

// compute keeps one CPU busy until end (ns since epoch), checking the clock
// every few hundred steps of an xorshift generator.
func (t *Target) compute(end int64) {
	x := uint64(end) | 1
	for t.now() < end {
		for range 256 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	t.cpuSink.Add(x)
}

func (t *Target) serveShed(w http.ResponseWriter) {
	if t.shed() {
		targetOK.write(w)
	} else {
		targetShed.write(w)
	}
}

// shed does ShedWorkTime's work and reports true, or reports false at
// once when more than ShedMaxInFlight are in flight.
func (t *Target) shed() bool {
	n := t.shedBusy.Add(1)
	defer t.shedBusy.Add(-1)
	if n > ShedMaxInFlight {
		return false
	}
	time.Sleep(ShedWorkTime)
	return true
}

// targetWait answers 200 after d, or 503 as soon as the request's context
// ends (the client went away or the server is stopping).
func targetWait(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if waited(w, r, d) {
		targetOK.write(w)
	}
}

// waited waits d and reports true, or answers 503 and reports false as soon
// as the request's context ends.
func waited(w http.ResponseWriter, r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-r.Context().Done():
		targetCanceled.write(w)
		return false
	}
}

// targetWindow is a fixed one-second-window limiter: LimitedRate
// admissions per wall-clock second. The state is one word, the second in the
// high bits and the count admitted in it in the low bits, so it takes one
// compare-and-swap and no lock.
type targetWindow struct{ state atomic.Uint64 }

const targetWindowCountBits = 20

func (l *targetWindow) allow(sec int64) bool {
	const mask = 1<<targetWindowCountBits - 1
	for {
		old := l.state.Load()
		win := int64(old >> targetWindowCountBits)
		next := uint64(sec)<<targetWindowCountBits | 1
		// A request that read the clock just before the second turned
		// (win-1) counts against the new window, so no window admits more
		// than the rate; a clock stepped further back starts a new window.
		if sec == win || sec == win-1 {
			if old&mask >= LimitedRate {
				return false
			}
			next = old + 1
		}
		if l.state.CompareAndSwap(old, next) {
			return true
		}
	}
}
