package grpc

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// stream is one user's stream: Run opens it for a step, and opens it
// again whenever it ends early; nothing is kept from one step to the next.
type stream struct {
	s     *Streams
	vars  *template.Vars
	next  func()
	timer *time.Timer
}

// Run streams as the probe's kind says until until (docs/grpc.md,
// "Streams").
func (st *stream) Run(until time.Time, m wire.Messages) {
	if st.s.plan.Kind == plan.StreamServer {
		st.receive(until, m)
		return
	}
	st.send(until, m)
}

// Close releases the stream's timer; its streams ended with their Run.
func (st *stream) Close() { st.timer.Stop() }

// sleep waits until due, false when the run is aborted first.
func (st *stream) sleep(due time.Time) bool {
	aborted := st.s.c.aborted
	if d := time.Until(due); d > 0 {
		st.timer.Reset(d)
		select {
		case <-st.timer.C:
		case <-aborted.Done():
			st.timer.Stop()
		}
	}
	return aborted.Err() == nil
}

// send runs a bidi or client stream's schedule: message k is due k
// periods after the start, and its latency runs from then. A message is
// dropped when it would leave more than the probe's timeout late (the
// stream's flow control held the ones before it back) or when
// max_in_flight_per_stream messages are unanswered; one due while no
// stream is open opens one, and one that cannot open fails with the
// reason.
func (st *stream) send(until time.Time, m wire.Messages) {
	s := st.s
	start := time.Now()
	var cur *open
	defer func() {
		if cur != nil {
			cur.finish(m)
		}
	}()
	for k := time.Duration(0); ; k++ {
		due := start.Add(k * s.period)
		if !due.Before(until) || !st.sleep(due) {
			return
		}
		if cur != nil && !cur.alive(m) {
			cur = nil
		}
		if time.Since(due) > s.c.timeout || cur != nil && cur.inFlight() >= s.plan.MaxInFlight {
			m.Dropped(due)
			continue
		}
		msg, o := st.message()
		if o != result.Success {
			m.Message(o, result.Code{}, due, time.Now())
			continue
		}
		if cur == nil {
			var err error
			if cur, err = st.open(m); err != nil {
				code, o := s.outcome(err)
				m.Message(o, code, due, time.Now())
				continue
			}
		}
		cur.send(msg, due, m)
	}
}

// open opens a bidi or client stream; a bidi stream's replies are read as
// they come.
func (st *stream) open(m wire.Messages) (*open, error) {
	ctx, cancel := context.WithCancelCause(st.s.c.aborted)
	cs, err := st.s.open(ctx, st.vars)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	o := &open{s: st.s, cs: cs, cancel: cancel, done: make(chan struct{})}
	if st.s.plan.Kind == plan.StreamBidi {
		go o.receive(m)
	} else {
		close(o.done)
	}
	return o, nil
}

// open is a bidi or client stream under way.
type open struct {
	s      *Streams
	cs     grpc.ClientStream
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the replies are read to the end

	mu      sync.Mutex
	pending pending // bidi: the messages sent and not answered
	ended   bool    // its messages are charged: nothing more counts
	closing bool    // the client closed its side: the end is due
}

// send sends msg, due at due. A client stream's message is done once
// grpc-go has taken it; a bidi one when its reply comes.
func (o *open) send(msg []byte, due time.Time, m wire.Messages) {
	bidi := o.s.plan.Kind == plan.StreamBidi
	if bidi {
		o.mu.Lock()
		o.pending.add(due, key(msg, o.s.sent))
		o.mu.Unlock()
	}
	err := o.cs.SendMsg(msg)
	switch {
	case err == nil && !bidi:
		m.Message(result.Success, result.GRPCStatus(0), due, time.Now())
	case err != nil && !bidi:
		// The server ended the stream: its status comes with the read.
		err = o.cs.RecvMsg(&reply{})
		if err == nil {
			err = errors.New("a client stream answered before its end")
		}
		code, oc := o.s.outcome(err)
		m.Message(oc, code, due, time.Now())
		o.end(oc, code, time.Now(), m)
	}
	// A bidi send that failed ended the stream: the read finds out why and
	// charges its messages, this one too.
}

// inFlight is how many of a bidi stream's messages are unanswered.
func (o *open) inFlight() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pending.unanswered
}

// alive reports whether the stream can take the next message: it has not
// ended, and no message of it waited longer than the probe's timeout.
// One that did ends it, a timeout with every message unanswered: with
// replies paired in order, a late reply would answer the wrong message.
func (o *open) alive(m wire.Messages) bool {
	now := time.Now()
	o.mu.Lock()
	due, ok := o.pending.oldest()
	expired := ok && !o.ended && now.Sub(due) > o.s.c.timeout
	ended := o.ended
	o.mu.Unlock()
	if expired {
		o.end(result.Timeout, result.Code{}, now, m)
		return false
	}
	return !ended
}

// end ends the stream early with outcome oc: every unanswered message is
// charged with it, and the stream's end counted.
func (o *open) end(oc result.Outcome, code result.Code, now time.Time, m wire.Messages) {
	o.mu.Lock()
	if o.ended {
		o.mu.Unlock()
		return
	}
	o.ended = true
	o.pending.charge(oc, code, now, m)
	o.mu.Unlock()
	o.s.live.StreamEnded(oc, code)
	o.cancel(nil)
}

// receive reads a bidi stream's replies, each the answer to its message,
// until the stream ends.
func (o *open) receive(m wire.Messages) {
	defer close(o.done)
	for {
		r := reply{field: o.s.echoed}
		err := o.cs.RecvMsg(&r)
		now := time.Now()
		if err != nil {
			o.mu.Lock()
			closing := o.closing
			o.mu.Unlock()
			code, oc := o.s.outcome(err)
			if !closing || oc != result.Closed || o.inFlight() > 0 {
				o.end(oc, code, now, m)
			}
			return
		}
		o.mu.Lock()
		if due, ok := o.pending.answer(r.key); ok && !o.ended {
			m.Message(result.Success, result.GRPCStatus(0), due, now)
		}
		o.mu.Unlock()
	}
}

// finish ends the stream at its step's end: the client closes its side,
// and the replies of the messages under way are awaited until the newest
// is the probe's timeout old; those still unanswered are timeouts. A
// client stream's reply is its call's status.
func (o *open) finish(m wire.Messages) {
	o.mu.Lock()
	o.closing = true
	last, waiting := o.pending.newest()
	o.mu.Unlock()
	defer o.cancel(nil)
	if err := o.cs.CloseSend(); err != nil {
		o.end(result.Reset, result.Code{}, time.Now(), m)
		return
	}
	if o.s.plan.Kind == plan.StreamClient {
		stop := time.AfterFunc(o.s.c.timeout, func() { o.cancel(errTimedOut) })
		defer stop.Stop()
		if err := o.cs.RecvMsg(&reply{}); err != nil && !o.aborted() {
			code, oc := o.s.outcome(err)
			if errors.Is(context.Cause(o.cs.Context()), errTimedOut) {
				code, oc = result.Code{}, result.Timeout
			}
			o.end(oc, code, time.Now(), m)
		}
		return
	}
	if !waiting {
		return
	}
	select {
	case <-o.done:
	case <-time.After(time.Until(last.Add(o.s.c.timeout))):
		o.end(result.Timeout, result.Code{}, time.Now(), m)
	case <-o.s.c.aborted.Done():
	}
}

// aborted reports whether the run was aborted: nothing more counts.
func (o *open) aborted() bool { return o.s.c.aborted.Err() != nil }

// errTimedOut ends a stream that waited longer than the probe's timeout.
var errTimedOut = errors.New("no message within the timeout")

// receive runs a server stream: each message is timed from the one before
// it (the first from the stream's opening) and counts as an attempt; a
// gap longer than the probe's timeout is a timeout and ends the stream,
// and a stream that ends before until is opened again.
func (st *stream) receive(until time.Time, m wire.Messages) {
	s := st.s
	for time.Now().Before(until) && s.c.aborted.Err() == nil {
		opened := time.Now()
		ctx, cancel := context.WithCancelCause(s.c.aborted)
		stop := time.AfterFunc(time.Until(until), func() { cancel(errUntil) })
		cs, err := st.request(ctx)
		if err != nil {
			code, o := s.outcome(err)
			m.Message(o, code, opened, time.Now())
			stop.Stop()
			cancel(nil)
			pause := time.Now().Add(retryPause) // not a spin on a server that refuses
			if pause.After(until) {
				pause = until
			}
			st.sleep(pause)
			continue
		}
		watchdog := time.AfterFunc(s.c.timeout, func() { cancel(errTimedOut) })
		prev := opened
		for {
			err := cs.RecvMsg(&reply{})
			now := time.Now()
			if err == nil {
				watchdog.Reset(s.c.timeout)
				m.Message(result.Success, result.GRPCStatus(0), prev, now)
				prev = now
				continue
			}
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, errUntil) || s.c.aborted.Err() != nil:
			case errors.Is(cause, errTimedOut):
				m.Message(result.Timeout, result.Code{}, prev, now)
				s.live.StreamEnded(result.Timeout, result.Code{})
			default:
				code, o := s.outcome(err)
				if o != result.Closed {
					m.Message(o, code, prev, now)
				}
				s.live.StreamEnded(o, code)
			}
			break
		}
		watchdog.Stop()
		stop.Stop()
		cancel(nil)
	}
}

// errUntil ends a server stream at its step's end.
var errUntil = errors.New("the step ended")

// retryPause spaces the openings of a server stream that fail at once.
const retryPause = 100 * time.Millisecond

// request opens a server stream with its one message.
func (st *stream) request(ctx context.Context) (grpc.ClientStream, error) {
	msg, o := st.message()
	if o != result.Success {
		return nil, unsent(o)
	}
	cs, err := st.s.open(ctx, st.vars)
	if err == nil {
		err = cs.SendMsg(msg)
	}
	if err == nil {
		err = cs.CloseSend()
	}
	return cs, err
}

// unsent is a message that could not be written, by its outcome.
type unsent result.Outcome

func (u unsent) Error() string { return "not sent: " + result.Outcome(u).String() }

// Do makes one exchange on a stream of its own, by deadline: one message
// and the first message back (a client stream's: its reply), for the
// settle between steps.
func (st *stream) Do(deadline time.Time) (result.Code, result.Outcome) {
	ctx, cancel := context.WithDeadline(st.s.c.aborted, deadline)
	defer cancel()
	cs, err := st.request(ctx)
	if err == nil {
		err = cs.RecvMsg(&reply{})
	}
	switch {
	case err == nil:
		return result.GRPCStatus(0), result.Success
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return result.Code{}, result.Timeout
	}
	return st.s.outcome(err)
}

// pending are a bidi stream's messages sent and not yet answered, oldest
// first.
type pending struct {
	queue      []sent
	unanswered int
}

type sent struct {
	due      time.Time
	key      string
	answered bool
}

func (p *pending) add(due time.Time, key string) {
	p.queue = append(p.queue, sent{due: due, key: key})
	p.unanswered++
}

// answer marks the oldest unanswered message of key answered and returns
// its due time; false when none is.
func (p *pending) answer(key string) (time.Time, bool) {
	for i := range p.queue {
		if q := &p.queue[i]; !q.answered && q.key == key {
			q.answered = true
			p.unanswered--
			for len(p.queue) > 0 && p.queue[0].answered {
				p.queue = p.queue[1:]
			}
			return q.due, true
		}
	}
	return time.Time{}, false
}

func (p *pending) oldest() (time.Time, bool) {
	if len(p.queue) == 0 {
		return time.Time{}, false
	}
	return p.queue[0].due, true
}

func (p *pending) newest() (time.Time, bool) {
	if len(p.queue) == 0 {
		return time.Time{}, false
	}
	return p.queue[len(p.queue)-1].due, true
}

// charge hands every unanswered message to m with outcome o.
func (p *pending) charge(o result.Outcome, code result.Code, now time.Time, m wire.Messages) {
	for _, q := range p.queue {
		if !q.answered {
			m.Message(o, code, q.due, now)
		}
	}
	p.queue, p.unanswered = p.queue[:0], 0
}
