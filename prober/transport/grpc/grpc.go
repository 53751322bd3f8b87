// Package grpc makes a gRPC probe's calls (docs/grpc.md) as the HTTP
// clients make their requests: an attempt is one unary call, a stream of
// the lean HTTP/2 client (package h2) framed as gRPC frames it (a POST of
// one length-prefixed message; the status in the trailers). The client's
// calls share grpc.connections connections of an h2.Pool, so that a level
// of N calls in flight is N streams multiplexed over those connections.
// grpc-go, the reference, is used only to ask a server for its
// descriptors by reflection and to check this client against it in tests.
//
// The hot path does no descriptor work: the method is resolved, and a
// fixed call's header block and framed message written, once when the
// client is built; the reply is not decoded (but a health check's status).
package grpc

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/grpcdesc"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/h2"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// Client is the connector of one probe's gRPC call.
type Client struct {
	addr    string      // host:port to dial
	tls     *tls.Config // grpcs://; nil for grpc://
	opts    h2.Options
	health  bool         // read the reply as a HealthCheckResponse
	fixed   []byte       // the header block of the fields that do not vary
	varying []plan.Field // metadata written per call, after fixed
	body    []byte       // the framed message, when it does not vary
	input   protoreflect.MessageDescriptor
	message *template.Template // the message's JSON, when it varies
	call    *plan.GRPC         // the call, whose size bounds a templated one
	timeout time.Duration      // request.timeout
	// certAsked says a server asked for a client certificate, which
	// tls_config has none of: under TLS 1.3 one that requires it rejects
	// the client after the client's handshake has ended, and the calls
	// find the connection closed (outcome.go).
	certAsked atomic.Bool
	aborted   context.Context // ends on Abort: every dial gives up
	abort     context.CancelFunc
	pool      *h2.Pool
	conns     wire.ConnSet[net.Conn] // connections dialled, until their end
}

// New builds the client of req, which config has compiled: its
// TLS settings and static credentials (sent as authorization metadata),
// and the method, from the descriptor set config read or, with
// reflection, asked of the server now, bounded by a few timeouts and by
// ctx: a run whose method cannot be resolved fails before it sends any load.
func New(ctx context.Context, req *plan.Request) (*Client, error) {
	c, err := newClient(req)
	if err != nil {
		return nil, err
	}
	c.health = req.GRPC.Health != nil
	c.fixed = c.header(req)
	mdesc, err := c.method(ctx, req)
	if err != nil {
		return nil, err
	}
	c.input = mdesc.Input()
	message, fixed := req.GRPC.Message.Literal()
	if !fixed {
		c.message = req.GRPC.Message
		return c, nil
	}
	msg, err := grpcdesc.Encode(c.input, []byte(message))
	if err != nil {
		return nil, fmt.Errorf("grpc.message: %w", err)
	}
	c.body = appendGRPCFrame(nil, msg)
	return c, nil
}

// newClient is the part of a client that dials: the server's address,
// its TLS settings, and the abort every dial watches.
func newClient(req *plan.Request) (*Client, error) {
	g, u := req.GRPC, req.URL
	if u.Host == "" {
		return nil, fmt.Errorf("url %q: not grpc://host:port", u)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443") // grpc-go's default port
	}
	c := &Client{
		addr:    addr,
		call:    g,
		timeout: req.Timeout,
		opts:    h2.Options{MaxBody: wire.MaxBodyBytes, MaxHeaderList: wire.MaxHeaderBytes, WriteTimeout: req.Timeout},
		pool:    h2.NewPool(1, g.Connections),
	}
	if u.Scheme == "grpcs" {
		c.tls = wire.WithALPN(req.TLS, []string{"h2"})
		if len(c.tls.Certificates) == 0 && c.tls.GetClientCertificate == nil {
			c.tls.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				c.certAsked.Store(true)
				return &tls.Certificate{}, nil // none, as crypto/tls sends without the callback
			}
		}
	}
	c.aborted, c.abort = context.WithCancel(context.Background())
	return c, nil
}

// method resolves the method req calls and checks that it streams as
// grpc.stream says (a unary call without it).
func (c *Client) method(ctx context.Context, req *plan.Request) (protoreflect.MethodDescriptor, error) {
	g := req.GRPC
	mdesc, err := c.resolve(ctx, req)
	if err == nil {
		var kind, match string
		if s := g.Stream; s != nil {
			kind, match = string(s.Kind), s.Match
		}
		err = grpcdesc.CheckStream(mdesc, kind, match)
	}
	if err != nil {
		return nil, fmt.Errorf("grpc method %s: %w", g.Method, err)
	}
	return mdesc, nil
}

// header writes the fields every call sends, in grpc-go's order: the
// pseudo-header fields, the content type, the deadline (as grpc-timeout,
// which the server enforces too), then the credentials and the metadata
// that does not vary; c.varying gets the rest.
func (c *Client) header(req *plan.Request) []byte {
	scheme := "http"
	if c.tls != nil {
		scheme = "https"
	}
	b := appendField(nil, ":method", "POST")
	b = appendField(b, ":scheme", scheme)
	b = appendField(b, ":path", "/"+req.GRPC.Method)
	b = appendField(b, ":authority", req.URL.Host)
	b = appendField(b, "content-type", "application/grpc")
	b = appendField(b, "user-agent", "loadprobe")
	b = appendField(b, "te", "trailers")
	b = appendField(b, "grpc-timeout", grpcTimeout(c.timeout))
	if req.Authorization != "" {
		b = appendField(b, "authorization", req.Authorization)
	}
	for _, f := range req.GRPC.Metadata {
		text, fixed := f.Value.Literal()
		if !fixed {
			c.varying = append(c.varying, f)
			continue
		}
		b = appendField(b, f.Name, text)
	}
	return b
}

func appendField(b []byte, name, value string) []byte {
	return h2.AppendField(b, name, []byte(value))
}

// grpcTimeout writes d as a grpc-timeout value: at most eight digits and
// a unit, rounded up, as grpc-go writes it.
func grpcTimeout(d time.Duration) string {
	const maxDigits = 1e8 - 1
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}} {
		if n := (d + u.unit - 1) / u.unit; n <= maxDigits {
			return strconv.FormatInt(int64(n), 10) + u.name
		}
	}
	return strconv.FormatInt(int64((d+time.Hour-1)/time.Hour), 10) + "H"
}

// appendGRPCFrame appends msg as a gRPC length-prefixed message: not
// compressed, its length in four bytes.
func appendGRPCFrame(b, msg []byte) []byte {
	b = append(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	return append(b, msg...)
}

// dial opens a connection to the server that speaks HTTP/2, with deadline.
func (c *Client) dial(deadline time.Time) (*h2.Conn, error) {
	nc, raw, err := wire.OpenConn(c.aborted, c.addr, c.tls, deadline, &c.conns)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol != "h2" {
		c.conns.Remove(raw)
		raw.Close()
		return nil, fmt.Errorf("tls: the server chose %q by ALPN, not h2", tc.ConnectionState().NegotiatedProtocol)
	}
	return h2.Start(nc, raw, &c.conns, c.opts, deadline)
}

// NewConn returns one user's Conn, on the next of the connections; its
// templated calls are written with vars.
func (c *Client) NewConn(vars *template.Vars) wire.Conn {
	w := &conn{client: c, group: c.pool.Join(), vars: vars}
	w.req = h2.Request{Header: c.fixed, Body: c.body, Keep: make([]byte, 0, messagePrefix)}
	if c.health {
		w.req.Keep = make([]byte, 0, maxHealthReply)
	}
	return w
}

// maxHealthReply is how much of a health check's reply is kept: a
// HealthCheckResponse is a status, a few bytes; a larger reply is not one
// (INTERNAL, outcome.go). Any other call keeps its reply's first message
// prefix only (messagePrefix), which says how grpc-go would read it.
const maxHealthReply = 4 << 10

// Abort cuts short every call under way and closes the connections.
func (c *Client) Abort() {
	c.abort()
	c.Close()
}

// Close closes the connections; a call afterwards dials again.
func (c *Client) Close() {
	c.pool.Close()
	for _, nc := range c.conns.Drain() {
		nc.Close() // one still in its handshake
	}
}

// conn is one worker's calls, on one of the client's connections.
type conn struct {
	client *Client
	group  *h2.Group
	req    h2.Request     // the call: the client's, or written per call
	vars   *template.Vars // the values of the call under way
	text   []byte         // a templated message's JSON, written anew per call
	body   []byte         // its frame
	block  []byte         // the header block with templated metadata
	value  []byte         // a templated metadata value
}

// Do makes one call, ending it at deadline.
func (w *conn) Do(deadline time.Time) (code result.Code, o result.Outcome) {
	c := w.client
	if c.message != nil || c.varying != nil {
		if err := w.render(); errors.Is(err, wire.ErrTooLarge) {
			return result.Code{}, result.TooLarge // not sent, as an HTTP request above it
		} else if err != nil {
			return result.Code{}, result.Other
		}
	}
	for try := 0; ; try++ {
		conn, err := w.group.Get(func() (*h2.Conn, error) { return c.dial(deadline) })
		if err != nil {
			return result.Code{}, c.failure(err, deadline)
		}
		resp, err := conn.RoundTrip(&w.req, deadline)
		switch {
		case errors.Is(err, h2.ErrUnprocessed) && try == 0:
			continue // not sent, or not processed: once more, on a new connection
		case err != nil:
			return result.Code{}, c.failure(err, deadline)
		}
		return c.outcome(resp, deadline)
	}
}

// render writes the call's templated message and metadata with the
// values of its attempt.
func (w *conn) render() error {
	c := w.client
	if c.call.Size(w.vars) > plan.MaxRequestBytes {
		return wire.ErrTooLarge
	}
	if c.message != nil {
		w.text = c.message.Append(w.text[:0], w.vars)
		msg, err := grpcdesc.Encode(c.input, w.text)
		if err != nil {
			return err
		}
		w.body = appendGRPCFrame(w.body[:0], msg)
		w.req.Body = w.body
	}
	if c.varying != nil {
		b := append(w.block[:0], c.fixed...)
		for _, f := range c.varying {
			w.value = f.Value.Append(w.value[:0], w.vars)
			b = h2.AppendField(b, f.Name, w.value)
		}
		w.block, w.req.Header = b, b
	}
	return nil
}

// Close leaves the connection the call shared: the last to leave closes
// it.
func (w *conn) Close() { w.group.Leave() }
