package prober

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// The engine's judgement (knees, caps, shapes, collapse, search decisions,
// guards, the open loop's schedule and drops, settling) is tested on
// virtual time: inside a testing/synctest bubble, the demo target's own
// handlers serve every attempt in process, with no socket, and a step of
// seconds runs in microseconds, its figures exact and repeatable. Real
// sockets and real time stay in the end-to-end tests of each transport.

// simTarget is a transport that serves each attempt with a handler called
// in process (a demo target's, or a test's own): the target's pools,
// limiters and delays run on the bubble's clock. An attempt past its
// deadline is a timeout, and the handler goes on with it, as a server does
// with a request whose client left; its request's context ends then, as a
// server sees its client's connection close. A gRPC probe's call goes to
// the HTTP route of its method's name, as the demo service's methods
// behave as those routes, and its codes are the statuses the service
// answers the same behaviours with.
type simTarget struct {
	handler http.Handler
	req     *plan.Request
	url     *url.URL
}

func (s *simTarget) NewConn(*template.Vars) transport.Conn { return simConn{s} }
func (s *simTarget) Abort()                                {}
func (s *simTarget) Close()                                {}

type simConn struct{ s *simTarget }

func (simConn) Close() {}

// simRTT is the round trip of every attempt, the request's way there and
// the response's back, as a loopback socket and a lean client take it: a
// target that answers at once still takes it, so that a closed loop does
// not spin at one instant of the bubble's clock.
const simRTT = 200 * time.Microsecond

// grpcOf is the status the demo service answers with where its HTTP route
// answers status.
var grpcOf = map[int]result.Code{
	http.StatusOK: result.GRPCStatus(0), http.StatusTooManyRequests: result.GRPCStatus(8),
	http.StatusServiceUnavailable: result.GRPCStatus(14), 499: result.GRPCStatus(1),
}

func (c simConn) Do(deadline time.Time) (result.Code, result.Outcome) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	u := c.s.url
	req := (&http.Request{Method: c.s.req.Method, URL: u, Header: http.Header{}, Host: u.Host}).WithContext(ctx)
	answered := make(chan int, 1)
	go func() {
		time.Sleep(simRTT / 2) // the request's way there
		w := httptest.NewRecorder()
		c.s.handler.ServeHTTP(w, req)
		time.Sleep(simRTT / 2) // the response's way back
		answered <- w.Code
	}()
	select {
	case status := <-answered:
		switch grpc := c.s.req.GRPC != nil; {
		case !grpc && c.s.req.ValidCode(status):
			return result.HTTPStatus(status), result.Success
		case !grpc:
			return result.HTTPStatus(status), result.HTTPError
		}
		if code := grpcOf[status]; code != result.GRPCStatus(0) {
			return code, result.HTTPError
		}
		return result.GRPCStatus(0), result.Success
	case <-ctx.Done():
		return result.Code{}, result.Timeout
	}
}

// simRun runs p on virtual time inside a bubble of its own, against the
// handler serve builds in the bubble, and returns its result.
func simRun(t *testing.T, p *plan.Probe, opts Options, serve func() http.Handler) result.Result {
	t.Helper()
	var r result.Result
	synctest.Test(t, func(*testing.T) {
		r = simRunIn(p, opts, serve())
		drain()
	})
	return r
}

// drain lets the bubble's clock run until the target has worked off what
// it accepted (a server goes on with requests whose client left): a bubble
// ends only once every goroutine of it has.
func drain() { time.Sleep(time.Minute) }

// simRunIn is simRun inside a bubble the caller made.
func simRunIn(p *plan.Probe, opts Options, h http.Handler) result.Result {
	opts.noAlarm = true
	if opts.cpu == nil {
		opts.cpu = func() time.Duration { return 0 } // the generator's CPU is not the bubble's
	}
	return run(context.Background(), p, opts, simWork(p, h), time.Now())
}

// simWork is p's request served by h.
func simWork(p *plan.Probe, h http.Handler) *request {
	u := p.Request.URL
	if g := p.Request.GRPC; g != nil {
		_, method, _ := strings.Cut(g.Method, "/")
		u = &url.URL{Scheme: "http", Host: u.Host, Path: "/" + strings.ToLower(method)}
	}
	t := muxing{&simTarget{handler: h, req: p.Request, url: u}, time.Duration(p.Request.Timeout)}
	return &request{t: t, req: p.Request, names: p.Vars, src: newVarSource(p), templated: p.Request.Templated}
}

// demo is a demo target built with opts, as simRun takes it.
func demo(opts target.Options) func() http.Handler {
	return func() http.Handler { return target.New(opts) }
}
