package prober

import (
	"math"
	"sync"
	"time"
)

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
		// keeps that from turning into NaN (openLoop stops before).
		a := (r1 - r0) / (2 * T)
		t = (-r0 + math.Sqrt(max(0, r0*r0+4*a*float64(n)))) / (2 * a)
	}
	return time.Duration(t * float64(time.Second))
}

// total is how many requests the stage sends: the integral of its rate.
func (st stage) total() float64 { return (st.level + st.rampTo) / 2 * st.duration.Seconds() }

// offered is the rate the stage asks for at elapsed time d.
func (st stage) offered(d time.Duration) float64 {
	return st.level + (st.rampTo-st.level)*d.Seconds()/st.duration.Seconds()
}

// job is one scheduled request handed to a sender.
type job struct {
	due  time.Time
	done *sync.WaitGroup
}

// sender owns one connection and sends the jobs it is handed, one at a time.
type sender struct {
	conn Conn
	rec  *stepRecorder
	jobs chan job
}

// senderPool hands each due request to an idle sender, most recently used
// first so that a low rate keeps reusing few connections. It grows up to
// max_in_flight senders; a request that finds them all busy is dropped.
type senderPool struct {
	mu   sync.Mutex
	idle []*sender
	all  []*sender
	max  int
	// freed is signalled when a sender goes idle, for a pacer that waits
	// for one (see openLoop); it holds at most one signal.
	freed chan struct{}
}

func (p *senderPool) get() (s *sender, isNew bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		s = p.idle[n-1]
		p.idle = p.idle[:n-1]
		return s, false
	}
	if len(p.all) >= p.max {
		return nil, false
	}
	return nil, true
}

func (p *senderPool) put(s *sender) {
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

// newSender starts a sender goroutine; it ends when the pool is closed.
func (e *engine) newSender(measureFrom *time.Time) *sender {
	s := &sender{conn: e.client.NewConn(), rec: newStepRecorder(), jobs: make(chan job, 1)}
	s.rec.within(e.window)
	e.pool.all = append(e.pool.all, s)
	e.recs = append(e.recs, s.rec)
	timeout := time.Duration(e.probe.Request.Timeout)
	go func() {
		for j := range s.jobs {
			sent := time.Now()
			e.live.SendDelay(sent.Sub(j.due).Seconds())
			e.live.InFlight(1)
			code, o := s.conn.Do(sent.Add(timeout))
			finished := time.Now()
			e.live.InFlight(-1)
			// Latency runs from the intended send time, so a stall is
			// charged to every request that should have gone out during it.
			e.observe(s.rec, o, code, j.due, finished, *measureFrom, thought(s.conn))
			e.pool.put(s)
			j.done.Done()
		}
	}()
	return s
}

// openLoop sends the stage's requests at their scheduled times until end,
// whatever the target's pace, then waits for the ones under way.
func (e *engine) openLoop(st stage, start, measureFrom, end time.Time) (dropped int64) {
	e.measureFrom = measureFrom
	e.useRecorders(0, end.Sub(measureFrom))
	e.live.OfferedRate(st.level)
	defer e.live.OfferedRate(0)
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	total := st.total()
	for n := 0; float64(n) < total; n++ {
		due := start.Add(st.offset(n))
		if !due.Before(end) {
			return dropped
		}
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-e.ctx.Done():
				return dropped
			}
		}
		if e.canceled() {
			return dropped
		}
		if st.rampTo != st.level {
			e.live.OfferedRate(st.offered(due.Sub(start)))
		}
		select {
		case <-e.pool.freed: // stale: the sender it announced may be taken
		default:
		}
		s, isNew := e.pool.get()
		if isNew && len(e.pool.all) > 0 && time.Since(due) > behindBy {
			// Behind schedule (a pause of the generator: GC, a preempted
			// thread, a slow syscall), the pacer dispatches the requests
			// that fell due without a break, and the senders it hands them
			// to get no core to take in their responses: none looks idle
			// only because none ran. Opening a connection for each request
			// then (an allocation and a dial each) keeps the pacer behind,
			// until max_in_flight connections are open and requests drop:
			// at 10k req/s, 300-500 drops and a p99 of 100 ms after a pause
			// of a few ms at the start of a step. So the pacer first gives
			// the senders the core, up to freedWait, and uses the first one
			// that comes back; only when none does is a connection opened.
			timer.Reset(freedWait)
			select {
			case <-e.pool.freed:
				s, isNew = e.pool.get()
			case <-timer.C:
			case <-e.ctx.Done():
				return dropped
			}
		}
		if isNew {
			s = e.newSender(&e.measureFrom)
		}
		if s == nil {
			e.live.Dropped()
			if !due.Before(measureFrom) { // the step's figures cover its window only
				dropped++
			}
			continue
		}
		inFlight.Add(1)
		s.jobs <- job{due: due, done: &inFlight}
	}
	return dropped
}

// A pacer behind schedule by more than behindBy that finds no idle sender
// waits up to freedWait for one to come back before opening a connection.
// On time, it opens one at once: then every sender is really busy.
const (
	behindBy  = 100 * time.Microsecond
	freedWait = time.Millisecond
)

// closeSenders ends every sender goroutine; they are all idle by then.
func (e *engine) closeSenders() {
	for _, s := range e.pool.all {
		close(s.jobs)
		s.conn.Close()
	}
}
