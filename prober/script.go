package prober

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// An exchange is one attempt of a request on a user's connection, with
// what reads or rewrites it around the wire (docs/scripts.md): its
// script's before_request writes the message sent, a flow step's captures
// and its script's after_response read the response.
type exchange struct {
	req     *plan.Request
	conn    transport.Conn
	reader  transport.Capturer // conn, when a script or captures read responses; else nil
	capture func(h http.Header, body []byte) bool
	errs    *scriptErrors
	msg     plan.Message
	call    plan.ScriptCall
	vars    *template.Vars
}

// newExchange returns req's exchange on conn, for a user whose values are
// vars, named names. capture takes a flow step's values; nil for none.
func newExchange(req *plan.Request, conn transport.Conn, vars *template.Vars, names []string, capture func(http.Header, []byte) bool, errs *scriptErrors) *exchange {
	x := &exchange{req: req, conn: conn, capture: capture, errs: errs, vars: vars}
	if req.Script != nil || capture != nil {
		x.reader, _ = conn.(transport.Capturer) // the transport was chosen to be one
	}
	x.call = plan.ScriptCall{Rand: vars.Rand, Names: names, Values: vars.Captured}
	return x
}

// do runs the attempt, giving up at deadline. missed reports a capture
// that found nothing, which fails the attempt as an http_error. A script's
// now() is the attempt's start: its intended time in the closed loop,
// within the lateness bound of it in the open loop.
func (x *exchange) do(deadline time.Time) (code result.Code, o result.Outcome, missed bool) {
	if x.reader == nil {
		code, o = x.conn.Do(deadline)
		return code, o, false
	}
	return x.read(deadline)
}

// read is do with a script or captures, whose reading of the response
// costs a closure: apart, so that a plain attempt allocates nothing.
func (x *exchange) read(deadline time.Time) (code result.Code, o result.Outcome, missed bool) {
	s := x.req.Script
	var m *plan.Message
	x.call.At = time.Now()
	if s != nil && s.Before() {
		x.req.Render(x.vars, &x.msg)
		if err := s.BeforeRequest(&x.call, &x.msg); err != nil {
			x.errs.keep(err)
			return result.Code{}, result.Script, false
		}
		m = &x.msg
	}
	code, o = x.reader.DoCapture(deadline, m, func(o result.Outcome, status int, h http.Header, body []byte) result.Outcome {
		if x.capture != nil && o == result.Success && !x.capture(h, body) {
			missed = true
			return result.HTTPError
		}
		if s == nil || !s.After() {
			return o
		}
		failed, err := s.AfterResponse(&x.call, plan.Reply{Status: status, Header: h, Body: body})
		switch {
		case err != nil:
			x.errs.keep(err)
			return result.Script
		case failed != "":
			return result.ScriptFailed
		}
		return o
	})
	return code, o, missed
}

// scriptErrors keeps the first error of a workload's scripts since it was
// last taken, for the step to report.
type scriptErrors struct{ first atomic.Pointer[string] }

func (e *scriptErrors) keep(err error) {
	msg := err.Error()
	e.first.CompareAndSwap(nil, &msg)
}

// take returns the first error kept, "" for none, and forgets it.
func (e *scriptErrors) take() string {
	if p := e.first.Swap(nil); p != nil {
		return *p
	}
	return ""
}
