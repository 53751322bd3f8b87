package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/h2"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// The lean HTTP/1.1 client. The request is serialized once; an attempt is one
// Write and the parsing of the response in place in the connection's read
// buffer, with no allocation once the connection is up, and a SetDeadline
// only when its deadline passes the one set (wire.Deadline).
// Whatever goes wrong, the connection is closed (a half-read response makes
// it unusable) and the next attempt dials a new one.

const readBufferSize = 8 << 10

type Client struct {
	addr      string        // host:port to dial
	tls       *tls.Config   // https (tls.go); nil for http
	request   []byte        // the whole request, body included; nil when templated
	shape     *requestShape // a templated request (template.go); nil otherwise
	head      bool          // HEAD: no response has a body
	host      string        // the Host header of a script's message that sets none
	keepAlive bool
	// replayable requests are sent again, once, on a fresh connection when
	// a reused one turns out to have been closed by the server before it
	// read the request (a keep-alive race, not a failure of the target),
	// under the rules of net/http.
	replayable bool
	req        *plan.Request
	conns      wire.ConnSet[net.Conn]
	aborted    context.Context // ends on Abort: every dial gives up
	abort      context.CancelFunc
	h2         *h2Client // https offering h2 by ALPN (h2.go); nil otherwise
	// The event loops' TLS configuration, asked of the server once
	// (mux_tls_linux.go).
	muxOnce sync.Once
	muxTLS  *tls.Config
	muxErr  error
}

func New(req *plan.Request) (*Client, error) {
	u := req.URL
	tlsConfig := fastTLSConfig(req)
	port := u.Port()
	if port == "" {
		port = "80"
		if tlsConfig != nil {
			port = "443"
		}
	}
	shape := serializeRequest(req)
	var request []byte
	if !req.Templated {
		// Fixed: serialized once, the whole request, as it is sent.
		var err error
		if request, err = shape.render(&conn{}); err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
		shape = nil
	}
	var h2c *h2Client
	if tlsConfig != nil && slices.Contains(tlsConfig.NextProtos, "h2") {
		var err error
		if h2c, err = newH2Client(req); err != nil {
			return nil, err
		}
	}
	aborted, abort := context.WithCancel(context.Background())
	return &Client{
		h2:      h2c,
		aborted: aborted, abort: abort,
		addr:      net.JoinHostPort(u.Hostname(), port),
		tls:       tlsConfig,
		request:   request,
		shape:     shape,
		head:      req.Method == "HEAD",
		host:      strings.TrimSuffix(u.Host, ":"),
		keepAlive: req.KeepAlive,
		replayable: req.Header.Has("Idempotency-Key") || req.Header.Has("X-Idempotency-Key") ||
			slices.Contains([]string{"GET", "HEAD", "OPTIONS", "TRACE"}, req.Method),
		req: req,
	}, nil
}

// serializeRequest writes the request's shape once, headers in a stable
// order, with the framing and defaults net/http would add: what does not
// vary as literal text, a templated URL or header value as its slots.
func serializeRequest(req *plan.Request) *requestShape {
	head := []*template.Template{template.Text(" HTTP/1.1\r\n")}
	header := func(name string, value *template.Template) {
		head = append(head, template.Text(name+": "), value, template.Text("\r\n"))
	}
	host := template.Text(strings.TrimSuffix(req.URL.Host, ":")) // "example.com:" means the default port (as Client.host)
	if req.Header.Host != nil {
		host = req.Header.Host
	}
	header("Host", host)
	for _, f := range req.Header.Fields {
		if !framing(f.Name, req.KeepAlive) {
			header(f.Name, f.Value)
		}
	}
	text, fixed := req.Body.Literal()
	return &requestShape{method: req.Method + " ", target: req.Target, head: template.Concat(head...), body: req.Body,
		length: hasLength(req.Method, len(text) > 0 || !fixed), tail: tail(req.KeepAlive)}
}

// framing reports the header fields the client writes itself, as net/http
// does: a configured or scripted one of these names is left out.
func framing(name string, keepAlive bool) bool {
	switch name {
	case "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	case "Connection":
		return !keepAlive
	}
	return false
}

// hasLength reports a request that carries a Content-Length: one with a
// body, or of a method that expects one.
func hasLength(method string, body bool) bool {
	return body || method == "POST" || method == "PUT" || method == "PATCH"
}

// tail is what follows the Content-Length: Connection: close without
// keep-alive, and the blank line.
func tail(keepAlive bool) string {
	if !keepAlive {
		return "Connection: close\r\n\r\n"
	}
	return "\r\n"
}

// NewConn returns one user's connection; vars are the values its
// templated requests are written with.
func (c *Client) NewConn(vars *template.Vars) wire.Conn {
	fc := &conn{c: c, br: bufio.NewReaderSize(nil, readBufferSize), vars: vars}
	if c.h2 != nil {
		fc.group = c.h2.pool.Join()
	}
	return fc
}

func (c *Client) Abort() {
	c.abort()
	c.Close()
}

func (c *Client) Close() {
	for _, nc := range c.conns.Drain() {
		nc.Close()
	}
}

type conn struct {
	c        *Client
	nc       net.Conn // nil until dialled, and after any failure; over TLS, the TLS connection
	raw      net.Conn // the TCP connection under nc
	br       *bufio.Reader
	reused   bool          // nc has carried a complete response
	head     bool          // the attempt under way is a HEAD: its response has no body
	deadline wire.Deadline // set on nc by the attempts after its dial

	// A templated request is written into buf (its body first into body),
	// with vars (template.go).
	vars      *template.Vars
	buf, body []byte

	// Over HTTP/2 (h2.go): the connection shared with the group's
	// other Conns, and a templated request's block and its field values.
	group *h2.Group
	h2req h2.Request
	value []byte

	// keep holds what a capturing step keeps of the response being read,
	// nil for any other; kept keeps its buffers for the next one.
	keep, kept *kept
}

func (fc *conn) Do(deadline time.Time) (result.Code, result.Outcome) { return fc.do(deadline, nil) }

// do sends m, or the request when m is nil, and reads the response.
func (fc *conn) do(deadline time.Time, m *plan.Message) (result.Code, result.Outcome) {
	if fc.group != nil && fc.nc == nil && m == nil {
		if code, o, ok := fc.doH2(deadline); ok {
			return code, o
		}
		// The server chose HTTP/1.1 for the connection fc now holds.
	}
	request := fc.c.request
	fc.head = fc.c.head
	var err error
	switch {
	case m != nil:
		fc.head = m.Method == "HEAD"
		request, err = fc.c.message(fc, m)
	case fc.c.shape != nil:
		request, err = fc.c.shape.render(fc)
	}
	if err != nil {
		return result.Code{}, wire.Classify(err) // unsent, as net/http would leave it
	}
	code, stale, err := fc.roundTrip(deadline, request)
	if stale && fc.c.replayable {
		code, _, err = fc.roundTrip(deadline, request)
	}
	if err != nil {
		return result.Code{}, wire.Classify(err)
	}
	return result.HTTPStatus(code), wire.Outcome(fc.c.req, code)
}

func (fc *conn) Close() {
	if fc.nc != nil {
		fc.closeConn()
	}
	if fc.group != nil {
		fc.group.Leave()
		fc.group = nil
	}
}

// roundTrip sends the request and reads the response. stale reports a
// failure of a reused connection before any byte of a response arrived:
// the server had closed it while it was idle.
func (fc *conn) roundTrip(deadline time.Time, request []byte) (code int, stale bool, err error) {
	if fc.nc != nil {
		if at, move := fc.deadline.Move(deadline); move {
			if err := fc.nc.SetDeadline(at); err != nil {
				fc.closeConn() // closed by the client's Close: dial again
			}
		}
	}
	if fc.nc == nil {
		if err := fc.dial(deadline); err != nil {
			return 0, false, err
		}
	}
	reused := fc.reused
	if _, err := fc.nc.Write(request); err != nil {
		fc.closeConn()
		if reused && errors.Is(err, net.ErrClosed) {
			// Closed by the client's Close under a deadline kept: nothing
			// was sent.
			return fc.roundTrip(deadline, request)
		}
		return 0, reused && isStale(err), err
	}
	// Let the other workers run before reading: by the time this one is
	// scheduled again its response has usually arrived, and the read gets
	// it at once. Reading straight away finds the socket empty when the
	// generator is busy: a wasted read syscall (EAGAIN), then parking on
	// the network poller and being woken from it. With one core and 50
	// connections against nginx that is 8% of the CPU per request and 15%
	// of the throughput (bench/BENCH.md); when nothing else is runnable,
	// Gosched returns at once and costs nothing worth counting.
	runtime.Gosched()
	code, keep, started, err := fc.readResponse()
	if err != nil {
		fc.closeConn()
		return 0, reused && !started && isStale(err), err
	}
	if keep && fc.c.keepAlive {
		fc.reused = true
	} else {
		fc.closeConn()
	}
	return code, false, nil
}

func (fc *conn) dial(deadline time.Time) error {
	nc, raw, err := wire.OpenConn(fc.c.aborted, fc.c.addr, fc.c.tls, deadline, &fc.c.conns)
	if err != nil {
		return err
	}
	fc.nc, fc.raw = nc, raw
	fc.br.Reset(fc.nc)
	fc.reused = false
	fc.deadline.Forget() // the dial set the attempt's own
	return nil
}

// closeConn closes the TCP connection; over TLS without a close_notify,
// which would cost a write per closed connection and tells the server
// nothing a closed socket does not.
func (fc *conn) closeConn() {
	fc.c.conns.Remove(fc.raw)
	fc.raw.Close()
	fc.nc, fc.raw = nil, nil
	fc.reused = false
}

// isStale reports the errors of a connection the peer had closed.
func isStale(err error) bool {
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
