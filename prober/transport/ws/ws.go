// Package ws talks to a WebSocket probe's target (docs/websocket.md) as
// the HTTP clients talk to theirs: its client hands each user a Conn, and
// an attempt is one message round trip on that Conn's session: send the
// body, read the next message whole. The session is opened by the first attempt that
// needs one, kept across attempts and steps, and opened again after the
// server closed it or an attempt failed on it; every opening is a
// handshake, counted and timed apart through live.Handshakes.
//
// gorilla/websocket carries the protocol: of the maintained libraries it
// costs the fewest allocations per round trip with a deadline on each
// (bench/BENCH.md, "WebSocket library"), since its deadlines are the
// connection's own and not a context per call.
package ws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// upgradedCode is the status code a message round trip is counted under
// in the responses: every reply comes on a session the server switched
// protocols for.
const upgradedCode = http.StatusSwitchingProtocols

// closeGrace bounds the close handshake of a session the probe ends.
const closeGrace = 100 * time.Millisecond

// Client opens the sessions of one probe's run.
type Client struct {
	url      *template.Template // the handshake's, rendered per handshake
	headers  http.Header        // the handshake's fixed headers
	varying  []plan.Field       // those rendered per handshake
	message  *template.Template // rendered per message
	fixed    bool               // the message does not vary: it is payload
	payload  []byte
	msgType  int // of payload
	dialer   websocket.Dialer
	reuse    bool // keep_alive: one session for many messages
	live     live.Handshakes
	ctx      context.Context // ends on Abort: handshakes under way stop
	cancel   context.CancelFunc
	sessions wire.ConnSet[*websocket.Conn]
}

// New builds the client from req, which config has compiled: its
// headers, with its static credentials, as on the HTTP fast path, its
// tls_config and proxy. Its URL, headers and message are templates as on
// HTTP: a message is written with the values of its
// attempt, a handshake with those of the attempt that opens the session.
// handshakes may be nil.
func New(req *plan.Request, handshakes live.Handshakes) (*Client, error) {
	if req.URL.Host == "" {
		return nil, fmt.Errorf("url %q: no host", req.URL)
	}
	c := &Client{
		url: req.Whole, message: req.Body,
		headers: http.Header{},
		reuse:   req.KeepAlive,
		live:    handshakes,
		dialer: websocket.Dialer{
			TLSClientConfig: req.TLS.Clone(),
			ReadBufferSize:  4096,
			WriteBufferSize: 4096,
			// The prober's own dial: a host that cannot resolve fails as
			// on HTTP, and running out of file descriptors backs off.
			NetDialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				return wire.Dial(ctx, addr, time.Time{})
			},
		},
	}
	if req.Header.Host != nil {
		host, _ := req.Header.Host.Literal() // config keeps Host literal
		c.headers.Set("Host", host)
	}
	c.varying = wire.FixedHeaders(req.Header, c.headers)
	if msg, fixed := c.message.Literal(); fixed {
		c.fixed, c.payload = true, []byte(msg)
		c.msgType = messageType(c.payload)
	}
	if req.Proxy != nil {
		c.dialer.Proxy = http.ProxyURL(req.Proxy)
	}
	if c.live == nil {
		c.live = live.NopHandshakes{}
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// messageType sends text that is UTF-8 as a text message, and anything
// else as a binary one.
func messageType(msg []byte) int {
	if utf8.Valid(msg) {
		return websocket.TextMessage
	}
	return websocket.BinaryMessage
}

// NewConn returns one user's session, whose templates are written with
// vars. It does not dial: the first Do does.
func (c *Client) NewConn(vars *template.Vars) wire.Conn { return &conn{client: c, vars: vars} }

// Abort cuts short the handshakes under way and closes every session.
func (c *Client) Abort() {
	c.cancel()
	for _, s := range c.sessions.Drain() {
		s.Close()
	}
}

// Close ends every session still open with a normal closure.
func (c *Client) Close() {
	for _, s := range c.sessions.Drain() {
		closeSession(s)
	}
	c.cancel()
}

// closeSession says goodbye (1000) and closes the connection, without
// waiting for the server's answer: the run is over.
func closeSession(s *websocket.Conn) {
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	_ = s.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeGrace))
	s.Close()
}

// conn is one worker's session, nil until opened.
type conn struct {
	client  *Client
	session *websocket.Conn
	vars    *template.Vars // the values of the attempt under way
	msg     []byte         // a templated message, written anew per attempt
}

// Do sends one message and reads the next one whole, opening the session
// first when it is not open. A reply counts as a response with code 101;
// a refused upgrade as an http_error with the server's code.
func (w *conn) Do(deadline time.Time) (code result.Code, o result.Outcome) {
	c := w.client
	msg, msgType := c.payload, c.msgType
	if !c.fixed {
		if c.message.Size(w.vars)+c.url.Size(w.vars) > plan.MaxRequestBytes {
			return result.Code{}, result.TooLarge
		}
		w.msg = c.message.Append(w.msg[:0], w.vars)
		msg, msgType = w.msg, messageType(w.msg)
	}
	if w.session == nil {
		if code, o := w.open(deadline); o != result.Success {
			return code, o
		}
	}
	s := w.session
	_ = s.SetWriteDeadline(deadline)
	_ = s.SetReadDeadline(deadline)
	if err := s.WriteMessage(msgType, msg); err != nil {
		return result.Code{}, w.fail(err)
	}
	_, r, err := s.NextReader()
	if err != nil {
		return result.Code{}, w.fail(err)
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return result.Code{}, w.fail(err)
	}
	if !w.client.reuse {
		w.Close()
	}
	return result.HTTPStatus(upgradedCode), result.Success
}

// open runs the handshake, bounded by deadline, and counts it.
func (w *conn) open(deadline time.Time) (code result.Code, o result.Outcome) {
	c := w.client
	header := c.headers
	if len(c.varying) > 0 {
		header = c.headers.Clone()
		wire.Render(header, c.varying, w.vars)
	}
	url := string(c.url.Append(nil, w.vars))
	ctx, cancel := context.WithDeadline(c.ctx, deadline)
	start := time.Now()
	s, resp, err := c.dialer.DialContext(ctx, url, header)
	took := time.Since(start).Seconds()
	cancel()
	switch {
	case err == nil:
		c.sessions.Add(s)
		// Abort cancels, then closes the sessions it finds: a handshake
		// that ended after that finds the cancel and closes its own.
		if err := c.ctx.Err(); err != nil {
			c.sessions.Remove(s)
			s.Close()
			o = wire.Classify(err)
			break
		}
		o = result.Success
		s.SetReadLimit(wire.MaxBodyBytes)
		w.session = s
	case errors.Is(err, websocket.ErrBadHandshake) && resp != nil && resp.StatusCode != upgradedCode:
		// The server answered, and not with a switch of protocols.
		code, o = result.HTTPStatus(resp.StatusCode), result.HTTPError
	default:
		o = wire.Classify(err)
	}
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	c.live.Handshake(o, took)
	return code, o
}

// fail ends the session an attempt failed on and names the attempt's
// outcome: closed, with its code counted, when the server sent a close
// frame; else as classify says. A session that failed is in an unknown
// state (a late reply would be taken for the next one's), so it is never
// used again.
func (w *conn) fail(err error) result.Outcome {
	s := w.session
	w.session = nil
	w.client.sessions.Remove(s)
	s.Close()
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == websocket.CloseAbnormalClosure {
			// gorilla's name for a connection that ended without a
			// close frame: the server did not close the session, it
			// dropped the connection.
			return result.Reset
		}
		w.client.live.CloseCode(ce.Code)
		return result.Closed
	}
	return wire.Classify(err)
}

// Close ends the session, if one is open.
func (w *conn) Close() {
	if s := w.session; s != nil {
		w.session = nil
		w.client.sessions.Remove(s)
		closeSession(s)
	}
}
