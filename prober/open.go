package prober

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The open loop has no central pacer. Each sender goroutine owns one
// connection and, whenever it is free, claims the next request of the
// schedule (one atomic add on a shared counter), sleeps on a timer of its
// own until that request is due and sends it: one wake-up per request and
// no hand-off, as wrk2 gives each connection its own schedule inside its
// event loop. An alarm that ticks with the schedule (alarm_linux.go) keeps
// the wake-ups on time when the generator idles in between.
//
// The pool grows by one sender whenever the last idle one starts a request
// on time, so a request finds a sender waiting for it, up to max_in_flight;
// a request that falls due while all max_in_flight senders are busy is
// dropped, never sent late in a burst. bench/BENCH.md has the measurements.

// offset is when request n of a stage is due, from the stage start: the
// time at which the integral of the offered rate reaches n. Scheduling
// every request from the stage start, never from the previous send, keeps
// the pacing from drifting.
func (st stage) offset(n int) time.Duration {
	r0, r1, T := st.level, st.rampTo, st.duration.Seconds()
	var t float64
	if r1 == r0 {
		t = float64(n) / r0
	} else {
		// N(t) = r0·t + (r1-r0)·t²/(2T); solve N(t) = n for t ≥ 0. Past
		// the stage's total a falling rate has no solution: the clamp
		// keeps that from turning into NaN (the senders stop before).
		a := (r1 - r0) / (2 * T)
		t = (-r0 + math.Sqrt(max(0, r0*r0+4*a*float64(n)))) / (2 * a)
	}
	return time.Duration(t * float64(time.Second))
}

// count is how many requests are due in the first d of the stage: the
// integral of its rate up to d.
func (st stage) count(d time.Duration) float64 {
	t, T := d.Seconds(), st.duration.Seconds()
	return st.level*t + (st.rampTo-st.level)*t*t/(2*T)
}

// total is how many requests the stage sends: the integral of its rate.
func (st stage) total() float64 { return (st.level + st.rampTo) / 2 * st.duration.Seconds() }

// offered is the rate the stage asks for at elapsed time d.
func (st stage) offered(d time.Duration) float64 {
	return st.level + (st.rampTo-st.level)*d.Seconds()/st.duration.Seconds()
}

// sender is one connection of the open loop and its recorder; it outlives
// the stage that opened it.
type sender struct {
	conn  link
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
}

// A sender that starts a request later than behindBy does not add a sender
// to the pool: the generator is behind (a GC pause, a preempted thread), and
// the senders already open catch up as they come free. Opening a connection
// for every late request instead keeps the generator behind until
// max_in_flight connections are open (bench/BENCH.md). While the next
// request is overdue by more than behindFor and no sender is idle, the watch
// adds one sender every behindFor: enough to follow a target that slows
// down, too few to flood the pool after a pause of the generator.
const (
	behindBy  = 100 * time.Microsecond
	behindFor = time.Millisecond
)

// openStage is one stage of the open loop under way.
type openStage struct {
	e                       *engine
	st                      stage
	start, measureFrom, end time.Time
	total                   float64
	alarm                   *alarm

	next    atomic.Int64 // the next request of the schedule nobody claimed
	running atomic.Int32 // senders running in this stage
	idle    atomic.Int32 // of them, those not sending
	full    fullTimes    // when max_in_flight senders were all busy
	dropped atomic.Int64 // in the measured window
	wg      sync.WaitGroup
}

// stageAlarm makes each stage's alarm. The tests that run the open loop
// inside a testing/synctest bubble go without one (noAlarm): its reader
// blocks on a file, which the bubble's clock cannot wait for.
var stageAlarm = newAlarm

// openLoop sends the stage's requests at their scheduled times until end,
// whatever the target's pace, then waits for the ones under way.
func (e *engine) openLoop(st stage, start, measureFrom, end time.Time) (dropped int64) {
	e.useRecorders(0, end.Sub(measureFrom))
	e.live.OfferedRate(st.level)
	defer e.live.OfferedRate(0)
	o := &openStage{e: e, st: st, start: start, measureFrom: measureFrom, end: end, total: st.total(), alarm: stageAlarm()}
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
		s = &sender{conn: newLink(o.e.client.NewConn()), rec: o.e.recorder(len(p.all)), timer: time.NewTimer(time.Hour)}
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
	timeout := time.Duration(e.probe.Request.Timeout)
	for {
		n := o.next.Add(1) - 1
		if float64(n) >= o.total {
			return
		}
		due := o.start.Add(o.st.offset(int(n)))
		if !due.Before(o.end) {
			return
		}
		if o.full.held(due.Sub(o.start)) {
			// Every one of max_in_flight senders was busy when it fell
			// due: dropped, not sent late.
			e.live.Dropped()
			if !due.Before(o.measureFrom) { // the step's figures cover its window only
				o.dropped.Add(1)
			}
			continue
		}
		if !o.sleepUntil(s.timer, due) || e.canceled() {
			return
		}
		e.live.InFlight(1)
		sent := time.Now()
		late := sent.Sub(due)
		if o.idle.Add(-1) == 0 {
			if late <= behindBy && o.spawn() {
				// A sender waits for the next request while this one is under way.
			} else if int(o.running.Load()) >= e.pool.max {
				o.full.begin(sent.Sub(o.start), o.st.offset(int(o.next.Load())))
			}
		}
		e.live.SendDelay(late.Seconds())
		code, out := s.conn.Do(sent.Add(timeout))
		finished := time.Now()
		e.live.InFlight(-1)
		// Latency runs from the intended send time, so a stall is
		// charged to every request that should have gone out during it.
		e.observe(s.rec, out, code, due, finished, o.measureFrom, s.conn.thought(), 0)
		if o.idle.Add(1) == 1 && int(o.running.Load()) >= e.pool.max {
			o.full.end(finished.Sub(o.start))
		}
	}
}

// fullTimes are the spans of a stage during which all max_in_flight
// senders were busy, as times since the stage start: a request due in one
// is dropped. A sender that frees up after such a span may send an overdue
// request that fell due just before it (the generator was late, not full)
// and so start the next span at once, while requests of the last span
// still wait to be claimed: the spans are kept until every request due in
// them has been.
type fullTimes struct {
	mu    sync.Mutex
	spans []fullSpan
	any   atomic.Bool // a span was ever begun: only then is mu taken
}

type fullSpan struct{ from, until time.Duration } // until: open while 0

func (f *fullTimes) begin(at, unclaimed time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.any.Store(true)
	// Spans that ended before the first unclaimed request are done with.
	i := 0
	for i < len(f.spans) && f.spans[i].until != 0 && f.spans[i].until <= unclaimed {
		i++
	}
	f.spans = append(f.spans[:0], f.spans[i:]...)
	f.spans = append(f.spans, fullSpan{from: at})
}

func (f *fullTimes) end(at time.Duration) {
	f.mu.Lock()
	if n := len(f.spans); n > 0 && f.spans[n-1].until == 0 {
		f.spans[n-1].until = at
	}
	f.mu.Unlock()
}

// held reports whether due fell in a span that has ended. Only a sender
// that is not busy asks, so the span under way, if any, began after due.
func (f *fullTimes) held(due time.Duration) bool {
	if !f.any.Load() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.spans) - 1; i >= 0; i-- {
		if sp := f.spans[i]; due >= sp.from {
			return sp.until != 0 && due < sp.until
		}
	}
	return false
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

// watch runs beside the senders until the stage's schedule is over: it
// keeps the alarm in step with the schedule, adds a sender while requests
// are overdue and none is idle (see behindFor), and keeps the offered-rate
// gauge of a ramp current. It looks every behindFor, or every interval of
// the schedule when that is longer (up to watchAtMost): a canary at a few
// requests per second does not wake the generator a thousand times a second.
func (o *openStage) watch() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-o.e.ctx.Done():
			return
		}
		now := time.Since(o.start)
		n := o.next.Load()
		if float64(n) >= o.total || o.st.offset(int(n)) >= o.st.duration || o.e.canceled() {
			return
		}
		if o.st.rampTo != o.st.level {
			o.e.live.OfferedRate(o.st.offered(now))
		}
		if o.idle.Load() == 0 && now-o.st.offset(int(n)) > behindFor {
			o.spawn()
		}
		t.Reset(min(max(o.keepAlarm(now), behindFor), watchAtMost))
	}
}

const watchAtMost = 100 * time.Millisecond

// keepAlarm sets the alarm to go off when the next request falls due after
// elapsed, and then at the schedule's interval from there (but no more often
// than every alarmEvery); it returns that interval. Set again at every look
// of the watch, the alarm follows a ramp and does not drift from the
// schedule (by at most a nanosecond per interval in between).
func (o *openStage) keepAlarm(elapsed time.Duration) (interval time.Duration) {
	n := int(math.Ceil(o.st.count(elapsed)))
	if float64(n) >= o.total {
		return behindFor
	}
	due := o.st.offset(n)
	interval = o.st.offset(n+1) - due
	if interval < alarmEvery {
		o.alarm.off()
	} else {
		o.alarm.every(o.start.Add(due), interval)
	}
	return interval
}

// alarmEvery is the shortest interval the alarm keeps. At higher rates the
// generator is busy and Go's own timers fire on time (the runtime looks at
// them whenever it schedules), while reading the alarm would cost a wake-up
// per interval: 8% of the core at 20k req/s (bench/BENCH.md).
const alarmEvery = 50 * time.Microsecond

// closeSenders closes every sender's connection; none runs by then.
func (e *engine) closeSenders() {
	for _, s := range e.pool.all {
		s.conn.Close()
	}
}
