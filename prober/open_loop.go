package prober

import (
	"runtime"
	"sync"
	"time"

	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// A stage whose schedule is dense throughout (an interval of batchBelow or
// less, 20 000 requests a second and more) and whose request is sent as it
// is, over HTTP/1.1 (plain or TLS), is sent by event loops instead of
// senders (docs/measurement.md, "The open loop's event loops"): one per
// core the generator may use but one, each over connections of its own
// (transport.Mux). With GOMAXPROCS of 2 or more a loop waits for its tick
// in a raw read, holding its P (ticker_linux.go): the core left over serves
// the rest of the process. While its Mux opens connections beside it (TLS
// handshakes), it lends its P between ticks instead. A loop wakes only on
// the schedule's ticks, every batchTick: it takes every answer that
// arrived since the last one, timed by the kernel when it arrived, gives
// up on those past their timeout, and sends every request due. An answer wakes nobody: at 20k/s against nginx
// the loops paid 0.80× wrk2's CPU per request (GOMAXPROCS=2 on one core),
// where the senders paid 1.37×, and a prototype woken by every answer 1.19×
// (bench/BENCH.md). The senders' rules hold: latency from the intended send
// time, no request later than its bound, a request due while all of
// max_in_flight are busy dropped, and no connection opened for a request
// the generator itself is late for, unless it stays behindFor overdue and
// the generator's CPU is under its budget; a loop opens connections as send
// explains.

// loops returns the event loops' wires for stage st, made on first use and
// kept across stages; nil when the stage is not theirs. Only one of the
// two keeps connections open: the senders' are closed when the loops take
// over, and the other way round.
func (e *engine) loops(st stage) []transport.Mux {
	p := &e.pool
	if !e.loopsFit(st) {
		e.closeLoops()
		return nil
	}
	if p.loops == nil {
		m := e.work.(*request).t.(transport.Muxer)
		for range min(max(runtime.GOMAXPROCS(0)-1, 1), p.max) {
			mx, err := m.NewMux()
			if err != nil {
				p.noLoops = true
				e.closeLoops()
				return nil
			}
			p.loops = append(p.loops, mx)
		}
		e.closeUsers()
	}
	return p.loops
}

// closeLoops closes the event loops' connections.
func (e *engine) closeLoops() {
	for _, m := range e.pool.loops {
		m.Close()
	}
	e.pool.loops = nil
}

// loopsFit reports whether the event loops send stage st.
func (e *engine) loopsFit(st stage) bool {
	from := e.opts.loopsFrom
	if from == 0 {
		from = float64(time.Second / batchBelow)
	}
	if e.pool.noLoops || min(st.level, st.rampTo) < from {
		return false
	}
	w, ok := e.work.(*request)
	if !ok || w.templated || w.req.Script != nil {
		return false
	}
	_, ok = w.t.(transport.Muxer)
	return ok
}

// eventLoop is one loop of a stage: it sends requests first, first+every,
// … of the schedule on its Mux, over at most most connections.
type eventLoop struct {
	o            *openStage
	mux          transport.Mux
	rec          *stepRecorder
	first, every int64
	most         int
	conns        []loopRequest // by connection, the request under way
	sent         []sentRequest // in the order sent: their timeouts fall due in turn
	answers      []transport.Answer
	inFlight     int
	seq          uint64
	grown        time.Time // when the loop last opened a connection while behind
	cpu          cpuWatch
	cpuFree      bool      // the generator's CPU was under its budget at the last look
	looked       time.Time // at the CPU
	rated        time.Time // when the offered-rate gauge of a ramp was last set
}

type loopRequest struct {
	due, sent time.Time
	seq       uint64
	busy      bool
}

type sentRequest struct {
	conn int
	seq  uint64
}

// runLoops runs the stage's event loops until its schedule is over and
// every request sent has ended.
func (o *openStage) runLoops(muxes []transport.Mux) {
	e := o.e
	k := len(muxes)
	var wg sync.WaitGroup
	for i, mx := range muxes {
		l := &eventLoop{o: o, mux: mx, rec: e.recorder(i), first: int64(i), every: int64(k),
			most: e.pool.max/k + min(max(e.pool.max%k-i, 0), 1), cpu: startCPUWatch(e.cpu), cpuFree: true}
		wg.Go(l.run)
	}
	wg.Wait()
}

func (l *eventLoop) run() {
	o, e := l.o, l.o.e
	tick := e.ticker()
	defer tick.close()
	tick.every(o.start.Add(batchTick), batchTick)
	n := l.first
	for {
		now := time.Now()
		l.collect()
		l.expire(now)
		n = l.send(n, now)
		if l.first == 0 && o.st.rampTo != o.st.level && now.Sub(l.rated) >= watchAtMost {
			e.live.OfferedRate(o.st.offered(now.Sub(o.start)))
			l.rated = now
		}
		if l.lookAtCPU(now); e.canceled() || n >= o.requests && l.inFlight == 0 || !tick.tick(l.mux.Opening()) {
			break
		}
	}
	for c := range l.conns {
		if l.conns[c].busy {
			e.live.InFlight(-1)
			l.mux.Drop(c)
			l.conns[c].busy = false
		}
	}
}

// collect records the answers that arrived since the last tick.
func (l *eventLoop) collect() {
	o, e := l.o, l.o.e
	l.answers = l.mux.Answers(l.answers[:0])
	for _, a := range l.answers {
		r := &l.conns[a.Conn]
		if !r.busy {
			continue // given up at its timeout
		}
		r.busy = false
		l.inFlight--
		e.live.InFlight(-1)
		code, out := a.Code, a.Outcome
		if out.Responded() && !a.At.Before(r.sent.Add(o.late)) {
			code, out = result.Code{}, result.Timeout // as the closed loop judges one
		}
		e.observe(l.rec, out, code, r.due, a.At, o.measureFrom, 0, 0)
	}
}

// expire gives up on the requests sent the probe's timeout ago or more.
func (l *eventLoop) expire(now time.Time) {
	o, e := l.o, l.o.e
	i := 0
	for ; i < len(l.sent); i++ {
		s := l.sent[i]
		r := &l.conns[s.conn]
		if !r.busy || r.seq != s.seq {
			continue
		}
		if now.Sub(r.sent) < o.late {
			break
		}
		r.busy = false
		l.inFlight--
		e.live.InFlight(-1)
		l.mux.Drop(s.conn)
		e.observe(l.rec, result.Timeout, result.Code{}, r.due, now, o.measureFrom, 0, 0)
	}
	l.sent = l.sent[:copy(l.sent, l.sent[i:])]
}

// send sends the loop's requests due by now from request n on, and returns
// the first it has not sent or dropped.
func (l *eventLoop) send(n int64, now time.Time) int64 {
	o, e := l.o, l.o.e
	// A connection is opened for a request when none is free only while
	// the loop keeps to its schedule: it woke within behindBy of its tick,
	// is still in that tick, and began it with no request overdue from an
	// earlier one. It then waits for connections, not for the generator.
	// Behind its schedule (after a pause, on a busy core) it opens one at
	// most every behindFor, and none while the generator's CPU is at its
	// budget (catchUp), as a sender does (open.go).
	tick := o.start.Add(now.Sub(o.start) / batchTick * batchTick)
	awake := now.Sub(tick) <= behindBy
	fresh := n >= o.requests || !o.start.Add(o.st.offset(int(n))).Before(tick.Add(-batchTick))
	for ; n < o.requests; n += l.every {
		due := o.start.Add(o.st.offset(int(n)))
		if due.After(now) {
			break
		}
		sent, late, ok := o.depart(n, due)
		if !ok {
			continue
		}
		c, ok := l.mux.Send(false)
		if !ok && l.mux.Conns() < l.most && awake && sent.Sub(tick) < batchTick && (fresh || l.catchUp(sent, late)) {
			c, ok = l.mux.Send(true)
		}
		if !ok {
			e.live.InFlight(-1)
			if l.mux.Conns() < l.most {
				break // the generator is behind: a connection coming free sends it
			}
			o.drop(n, n+1) // due while every connection was busy
			continue
		}
		for len(l.conns) <= c {
			l.conns = append(l.conns, loopRequest{})
		}
		l.seq++
		l.conns[c] = loopRequest{due: due, sent: sent, seq: l.seq, busy: true}
		l.sent = append(l.sent, sentRequest{conn: c, seq: l.seq})
		l.inFlight++
		e.live.SendDelay(late.Seconds())
	}
	return n
}

// catchUp reports whether the loop opens a connection for a request late
// by late while none is free: when it is behindFor overdue, at most one
// every behindFor, and not while the generator's CPU reached its budget.
func (l *eventLoop) catchUp(now time.Time, late time.Duration) bool {
	if late <= behindFor || now.Sub(l.grown) < behindFor || !l.cpuFree {
		return false
	}
	l.grown = now
	return true
}

// lookAtCPU measures the generator's CPU every cpuLook.
func (l *eventLoop) lookAtCPU(now time.Time) {
	if now.Sub(l.looked) < cpuLook {
		return
	}
	var busy float64
	busy, l.cpu = l.cpu.lap()
	l.cpuFree = busy < l.o.e.probe.Rules.GeneratorCPUBudget
	l.looked = now
}

// cpuLook is how often a loop measures the generator's CPU: over a
// millisecond, as a sender's watch looks, a loop busy with its ticks
// still idles under its budget in one window of ten.
const cpuLook = 10 * time.Millisecond
