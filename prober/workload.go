package prober

import (
	"context"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// A workload is what the engine repeats at every level: the attempt of a
// request, or the iteration of a flow (docs/templates.md, "Flows"), each
// run by one user: a closed-loop worker, or an open-loop sender. The
// engine measures both the same way (observe); a flow's users also hand
// it each step's attempt, which it records beside the iteration, in the
// same window (observeStep).
type workload interface {
	// newUser returns one user, with its own connections. It does not
	// dial: its first attempt does.
	newUser() user
	// abort cuts short every attempt under way, from any goroutine, and
	// releases the connections: the load stops at once instead of a
	// timeout later. No user can be used afterwards.
	abort()
	// close releases the connections of every user still open. Call it
	// once the users have stopped.
	close()
	// steps names a flow's steps, in order; nil for a single request.
	steps() []string
	// scriptError is the first error of its scripts since the last call;
	// "" for none (docs/scripts.md).
	scriptError() string
}

// user is one worker's or sender's part of a workload; not safe for
// concurrent use.
type user interface {
	// do runs one attempt (or iteration), giving up at deadline (a flow's
	// steps have their own timeouts). It returns its response's code (zero
	// when there was none), its outcome, and the think time it spent,
	// which latency leaves out. A flow hands each step's attempt to steps.
	do(deadline time.Time, steps stepObserver) (code result.Code, o result.Outcome, think time.Duration)
	close()
}

// stepObserver takes one attempt of a flow's step i: sent and finished,
// and whether a capture found nothing in its response (missed).
type stepObserver func(i int, o result.Outcome, code result.Code, sent, finished time.Time, missed bool)

// newWorkload is the workload of p: the flow of its steps, or its request,
// each on the transport that speaks its protocol, built within ctx.
// sink takes a WebSocket probe's handshakes and close codes, and a gRPC
// stream probe's streams, when it implements live.Handshakes or
// live.Streams.
func newWorkload(ctx context.Context, p *plan.Probe, sink live.Sink) (workload, error) {
	if len(p.Flow) > 0 {
		return newFlow(ctx, p)
	}
	if p.Request.GRPC != nil && p.Request.GRPC.Stream != nil {
		return newStreams(ctx, p, sink)
	}
	handshakes, _ := sink.(live.Handshakes)
	t, _, err := transport.Choose(ctx, p.Name, p.Request, false, handshakes)
	if err != nil {
		return nil, err
	}
	return &request{t: t, req: p.Request, names: p.Vars, src: newVarSource(p), templated: p.Request.Templated}, nil
}

// request is the workload of a single request.
type request struct {
	t         transport.Transport
	req       *plan.Request
	names     []string // the values a user's attempts carry (plan.Probe.Vars)
	src       *varSource
	templated bool // an attempt takes the next values of the probe's templates
	errs      scriptErrors
}

func (w *request) newUser() user {
	vars := template.NewVars(len(w.names))
	return &requestUser{w: w, vars: vars, x: newExchange(w.req, w.t.NewConn(vars), vars, w.names, nil, &w.errs)}
}

func (w *request) abort()              { w.t.Abort() }
func (w *request) close()              { w.t.Close() }
func (w *request) steps() []string     { return nil }
func (w *request) scriptError() string { return w.errs.take() }

type requestUser struct {
	w    *request
	vars *template.Vars
	x    *exchange
}

func (u *requestUser) do(deadline time.Time, _ stepObserver) (result.Code, result.Outcome, time.Duration) {
	if u.w.templated {
		u.w.src.attempt(u.vars)
	}
	code, o, _ := u.x.do(deadline)
	return code, o, 0
}

func (u *requestUser) close() { u.x.conn.Close() }
