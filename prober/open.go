package prober

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadprobe/loadprobe/prober/transport"
)

// The open loop has no central pacer. Each sender goroutine owns one
// connection and, whenever it is free, claims the next request of the
// schedule (one atomic add on a shared counter), sleeps on a timer of its
// own until that request is due and sends it: one wake-up per request and
// no hand-off, as wrk2 gives each connection its own schedule inside its
// event loop. An alarm that ticks with the schedule (alarm_linux.go) keeps
// the wake-ups on time when the generator idles in between. At high rates
// the senders wake on ticks of the schedule instead, several requests to a
// wake-up (batchTick); there an HTTP/1.1 request, plain or over TLS, goes
// to the event loops instead (open_loop.go).
//
// The pool grows by one sender whenever the last idle one starts a request
// on time, so a request finds a sender waiting for it, up to max_in_flight;
// a request that falls due while all max_in_flight senders are busy is
// dropped, never sent late in a burst. Nor does a request leave more than
// the probe's timeout after its time, or after the stage's end: a sender
// that comes free later drops it and every other overdue one at once, so
// that a target which never answers cannot stretch the run beyond its plan
// and the timeout. bench/BENCH.md has the measurements.

// sender is one user of the open loop and its recorder; it outlives the
// stage that opened it.
type sender struct {
	user  user
	rec   *stepRecorder
	timer *time.Timer
}

// senderPool holds the senders of a run, up to max_in_flight. A stage starts
// senders as it needs them, the last one put back first, so that a low rate
// keeps reusing few (warm) connections.
type senderPool struct {
	mu   sync.Mutex
	free []*sender
	all  []*sender
	max  int
	// loops are the event loops' wires (open_loop.go), made when a stage
	// is theirs; noLoops, once the transport turned out to offer none.
	loops   []transport.Mux
	noLoops bool
}

// A sender that starts a request later than behindBy does not add a sender
// to the pool: the generator is behind (a GC pause, a preempted thread), and
// the senders already open catch up as they come free. Opening a connection
// for every late request instead keeps the generator behind until
// max_in_flight connections are open (bench/BENCH.md). While the next
// request is overdue by more than behindFor and no sender is idle, the watch
// adds one sender every behindFor: enough to follow a target that slows
// down, too few to flood the pool after a pause of the generator. But not
// while the generator's CPU since the watch's last look reached the probe's
// generator_cpu_budget, the share at which a step is generator-limited:
// then it is the generator that is behind, and every connection more costs
// it CPU per request (1 000 cost more than 50) and sends nothing sooner
// (bench/BENCH.md).
const (
	behindBy  = 100 * time.Microsecond
	behindFor = time.Millisecond
)

// openStage is one stage of the open loop under way.
type openStage struct {
	e                       *engine
	st                      stage
	start, measureFrom, end time.Time
	alarm                   *alarm
	// requests is how many the stage schedules (0 to requests-1), measured
	// the first of them due in the measured window.
	requests, measured int64
	// late is the probe's timeout: the latest a request may leave after
	// its time, and each attempt's deadline (see bound and endGrace;
	// docs/design.md, "Open-loop latency").
	late time.Duration

	next    atomic.Int64 // the next request of the schedule nobody claimed
	running atomic.Int32 // senders running in this stage
	idle    atomic.Int32 // of them, those not sending
	full    fullTimes    // when max_in_flight senders were all busy
	dropped atomic.Int64 // in the measured window
	tick    atomic.Int64 // ns; > 0: the senders wake on the schedule's ticks (wakeFor)
	wg      sync.WaitGroup
}

// openLoop sends the stage's requests at their scheduled times until end,
// whatever the target's pace, then waits for the ones under way.
func (e *engine) openLoop(st stage, start, measureFrom, end time.Time) (dropped int64) {
	e.useRecorders(0, end.Sub(measureFrom))
	e.live.OfferedRate(st.level)
	defer e.live.OfferedRate(0)
	o := &openStage{e: e, st: st, start: start, measureFrom: measureFrom, end: end,
		requests: st.requests(), late: time.Duration(e.probe.Request.Timeout)}
	if o.requests > 0 {
		o.measured = st.index(measureFrom.Sub(start))
	}
	if loops := e.loops(st); loops != nil {
		o.runLoops(loops)
		return o.dropped.Load()
	}
	o.alarm = e.alarm()
	defer o.alarm.close()
	if o.spawn() {
		o.watch()
	}
	o.wg.Wait()
	return o.dropped.Load()
}

// spawn starts one more sender if max_in_flight allows; it reports whether
// it did.
func (o *openStage) spawn() bool {
	p := &o.e.pool
	p.mu.Lock()
	if int(o.running.Load()) >= p.max {
		p.mu.Unlock()
		return false
	}
	var s *sender
	if n := len(p.free); n > 0 {
		s = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		s = &sender{user: o.e.work.newUser(), rec: o.e.recorder(len(p.all)), timer: time.NewTimer(time.Hour)}
		s.timer.Stop()
		p.all = append(p.all, s)
	}
	o.running.Add(1)
	o.idle.Add(1)
	o.wg.Add(1)
	p.mu.Unlock()
	go o.send(s)
	return true
}

// send is one sender's loop: claim the next request, wait for its time,
// send it, until the stage's schedule is over.
func (o *openStage) send(s *sender) {
	e := o.e
	defer func() {
		o.idle.Add(-1)
		o.running.Add(-1)
		e.pool.mu.Lock()
		e.pool.free = append(e.pool.free, s)
		e.pool.mu.Unlock()
		o.wg.Done()
	}()
	steps := e.stepObserver(s.rec, o.measureFrom)
	for {
		n := o.next.Add(1) - 1
		if n >= o.requests {
			return
		}
		due := o.start.Add(o.st.offset(int(n)))
		if until, held := o.full.covering(due.Sub(o.start)); held {
			// Every one of max_in_flight senders was busy when it fell
			// due, and until the span's end: dropped, not sent late.
			o.drop(n, n+1)
			o.skipTo(o.st.index(until))
			continue
		}
		wake := o.wakeFor(due)
		if !o.sleepUntil(s.timer, wake) || e.canceled() {
			return
		}
		sent, late, ok := o.depart(n, due)
		if !ok {
			// So is every request due before this one's bound.
			o.skipTo(o.overdue(sent))
			continue
		}
		// On time is on time for its wake-up: a tick's lateness is the
		// schedule's, not the generator falling behind.
		if o.idle.Add(-1) == 0 {
			if sent.Sub(wake) <= behindBy && o.spawn() {
				// A sender waits for the next request while this one is under way.
			} else if int(o.running.Load()) >= e.pool.max {
				o.full.begin(sent.Sub(o.start), o.st.offset(int(o.next.Load())))
			}
		}
		e.live.SendDelay(late.Seconds())
		code, out, think := s.user.do(sent.Add(o.late), steps)
		finished := time.Now()
		e.live.InFlight(-1)
		// Latency runs from the intended send time, so a stall is
		// charged to every request that should have gone out during it.
		e.observe(s.rec, out, code, due, finished, o.measureFrom, think, 0)
		if o.idle.Add(1) == 1 && int(o.running.Load()) >= e.pool.max {
			o.full.end(finished.Sub(o.start))
		}
	}
}

// depart sends request n, due at due, on its way: in flight from now
// (sent), late by late; or, when that is past its bound, too late to
// measure anything but the generator's lag, and dropped (ok is false).
func (o *openStage) depart(n int64, due time.Time) (sent time.Time, late time.Duration, ok bool) {
	o.e.live.InFlight(1)
	sent = time.Now()
	late = sent.Sub(due)
	if late > o.bound(sent) {
		o.e.live.InFlight(-1)
		o.drop(n, n+1)
		return sent, late, false
	}
	return sent, late, true
}

// bound is how late a request may leave at now: the probe's timeout, and
// once the stage is over endGrace.
func (o *openStage) bound(now time.Time) time.Duration {
	if now.Before(o.end) {
		return o.late
	}
	return min(o.late, endGrace)
}

// overdue is the first request that may still leave at now: every one due
// before it is more than its bound behind.
func (o *openStage) overdue(now time.Time) int64 {
	return o.st.index(now.Sub(o.start) - o.bound(now))
}

// endGrace is how late a request due before its stage's end may still leave
// after it: one of the schedule's last, woken a little late (a tick, a busy
// core), is sent, while one that waited for a sender to come free is not.
// Without it every step would end on a few drops.
const endGrace = 20 * time.Millisecond

// skipTo drops the requests nobody has claimed that are due before request
// m: claimed one by one, a backlog of them would cost a claim each, which
// an overloaded generator can least afford.
func (o *openStage) skipTo(m int64) {
	m = min(m, o.requests)
	for {
		n := o.next.Load()
		if n >= m {
			return
		}
		if o.next.CompareAndSwap(n, m) {
			o.drop(n, m)
			return
		}
	}
}

// drop counts requests from to to-1 as dropped: all in the live metrics,
// those due in the measured window in the step.
func (o *openStage) drop(from, to int64) {
	for range to - from {
		o.e.live.Dropped()
	}
	if in := to - max(from, o.measured); in > 0 {
		o.dropped.Add(in)
	}
}

// sleepUntil waits for request n's time, false when the run ends first.
func (o *openStage) sleepUntil(t *time.Timer, due time.Time) bool {
	wait := time.Until(due)
	if wait <= 0 {
		return true
	}
	t.Reset(wait)
	select {
	case <-t.C:
		return true
	case <-o.e.ctx.Done():
		t.Stop()
		return false
	}
}

// wakeFor is when a sender wakes for a request due at due: at due, or at
// the first tick of the schedule at or after it.
func (o *openStage) wakeFor(due time.Time) time.Time {
	tick := time.Duration(o.tick.Load())
	if tick == 0 {
		return due
	}
	if w := tickOf(due.Sub(o.start), tick); w < o.st.duration {
		return o.start.Add(w)
	}
	return due
}

// tickOf is the first tick at or after d, on ticks every tick from 0.
func tickOf(d, tick time.Duration) time.Duration { return (d + tick - 1) / tick * tick }

// watch runs beside the senders until the stage's schedule is over: it
// keeps the alarm in step with the schedule, adds a sender while requests
// are overdue and none is idle unless the generator's CPU is what holds them
// up (see behindFor), and keeps the offered-rate
// gauge of a ramp current. It looks every behindFor, or every interval of
// the schedule when that is longer (up to watchAtMost): a canary at a few
// requests per second does not wake the generator a thousand times a second.
func (o *openStage) watch() {
	t := time.NewTimer(0)
	defer t.Stop()
	cpu := startCPUWatch(o.e.cpu)
	for {
		select {
		case <-t.C:
		case <-o.e.ctx.Done():
			return
		}
		now := time.Since(o.start)
		n := o.next.Load()
		if n >= o.requests || o.e.canceled() {
			return
		}
		if o.st.rampTo != o.st.level {
			o.e.live.OfferedRate(o.st.offered(now))
		}
		var busy float64
		busy, cpu = cpu.lap()
		if o.idle.Load() == 0 && now-o.st.offset(int(n)) > behindFor && busy < o.e.probe.Rules.GeneratorCPUBudget {
			o.spawn()
		}
		t.Reset(min(max(o.keepAlarm(now), behindFor), watchAtMost))
	}
}

const watchAtMost = 100 * time.Millisecond

// keepAlarm sets the alarm to go off when the next request falls due after
// elapsed, and then at the schedule's interval from there; at intervals of
// batchBelow or less, at the schedule's ticks instead, on which the senders
// then wake (wakeFor). It returns the interval. Set again at every look of
// the watch, the alarm follows a ramp and does not drift from the schedule
// (by at most a nanosecond per interval in between).
func (o *openStage) keepAlarm(elapsed time.Duration) (interval time.Duration) {
	n := int(math.Ceil(o.st.count(elapsed)))
	if int64(n) >= o.requests {
		return behindFor
	}
	due := o.st.offset(n)
	interval = o.st.offset(n+1) - due
	if interval <= batchBelow {
		o.tick.Store(int64(batchTick))
		o.alarm.every(o.start.Add((elapsed/batchTick+1)*batchTick), batchTick)
	} else {
		o.tick.Store(0)
		o.alarm.every(o.start.Add(due), interval)
	}
	return interval
}

// At 20k req/s and more the senders wake on ticks of the schedule, every
// batchTick, each tick sending the requests due since the last one: one
// wake-up of the generator, its timers and its alarm for several requests,
// where a wake-up per request cost it three times the closed loop's CPU
// per request. The price is lateness, charged to the target as any other:
// half a tick on average. Measured at 20k req/s against nginx, one core:
// CPU per request 32 → 19 µs (the closed loop's: 9 µs), p50 0.05 →
// 0.15 ms, p99 1.0 → 0.25 ms (bench/BENCH.md, "The open loop at the closed
// loop's cost"). A tick of 250 µs is the coarsest that keeps the p50 from
// the intended send within 0.25 ms (0.19–0.23 ms at 20k req/s). At 100–200
// µs, a target on the other core of a virtual machine went unwoken for 100
// ms in 15 of 23 runs; at 250 µs in 1 of 9 (docs/measurement.md, "The open
// loop's event loops").
const (
	batchBelow = 50 * time.Microsecond
	batchTick  = 250 * time.Microsecond
)

// alarm makes a stage's alarm; nil without one (Options.noAlarm).
func (e *engine) alarm() *alarm {
	if e.opts.noAlarm {
		return nil
	}
	return newAlarm()
}

// closeSenders closes the connections of every sender and event loop;
// none runs by then.
func (e *engine) closeSenders() {
	e.closeUsers()
	e.closeLoops()
}

// closeUsers closes every sender's connections; a sender used afterwards
// dials again.
func (e *engine) closeUsers() {
	for _, s := range e.pool.all {
		s.user.close()
	}
}
