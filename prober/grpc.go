package prober

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/grpcdesc"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/internal/h2"
	"github.com/loadprobe/loadprobe/result"
)

// A gRPC probe (docs/grpc.md) runs on the engine as an HTTP probe does: an
// attempt is one unary call, a stream of the lean HTTP/2 client
// (prober/internal/h2) framed as gRPC frames it (a POST of one
// length-prefixed message; the status in the trailers). The client keeps
// grpc.connections connections and hands each worker's Conn one of them
// in turn, so that a level of N calls in flight is N streams multiplexed
// over those connections. grpc-go, the reference, is used only to ask a
// server for its descriptors (grpc_reflect.go) and to check this client
// against it (grpc_diff_test.go).
//
// The hot path does no descriptor work: the method is resolved, and a
// fixed call's header block and framed message written, once when the
// client is built; the reply is not decoded (but a health check's status).

// grpcClient is the connector of one probe's gRPC call.
type grpcClient struct {
	addr    string      // host:port to dial
	tls     *tls.Config // grpcs://; nil for grpc://
	opts    h2.Options
	health  bool         // read the reply as a HealthCheckResponse
	fixed   []byte       // the header block of the fields that do not vary
	varying []plan.Field // metadata written per call, after fixed
	body    []byte       // the framed message, when it does not vary
	input   protoreflect.MessageDescriptor
	message *template.Template // the message's JSON, when it varies
	timeout time.Duration      // request.timeout
	// certAsked says a server asked for a client certificate, which
	// tls_config has none of: under TLS 1.3 one that requires it rejects
	// the client after the client's handshake has ended, and the calls
	// find the connection closed (grpc_outcome.go).
	certAsked atomic.Bool
	aborted   context.Context // ends on Abort: every dial gives up
	abort     context.CancelFunc
	slots     []*grpcSlot
	next      atomic.Uint64
	conns     connSet[net.Conn] // connections dialled, until their end
}

// grpcSlot is one of the client's connections, dialled when a call first
// needs it and again once it can take no more streams.
type grpcSlot struct {
	mu   sync.Mutex
	conn *h2.Conn
}

// newGRPCClient builds the client of req, which config has compiled: its
// TLS settings and static credentials (sent as authorization metadata),
// and the method, from the descriptor set config read or, with
// reflection, asked of the server now, bounded by a few timeouts: a run
// whose method cannot be resolved fails before it sends any load.
func newGRPCClient(req *plan.Request) (*grpcClient, error) {
	g, u := req.GRPC, req.URL
	if u.Host == "" {
		return nil, fmt.Errorf("url %q: not grpc://host:port", u)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443") // grpc-go's default port
	}
	c := &grpcClient{
		addr:    addr,
		timeout: req.Timeout,
		opts:    h2.Options{MaxBody: maxBodyBytes, MaxHeaderList: maxHeaderBytes, WriteTimeout: req.Timeout},
		slots:   make([]*grpcSlot, g.Connections),
	}
	if u.Scheme == "grpcs" {
		c.tls = withALPN(req.TLS, []string{"h2"})
		if len(c.tls.Certificates) == 0 && c.tls.GetClientCertificate == nil {
			c.tls.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				c.certAsked.Store(true)
				return &tls.Certificate{}, nil // none, as crypto/tls sends without the callback
			}
		}
	}
	for i := range c.slots {
		c.slots[i] = &grpcSlot{}
	}
	c.aborted, c.abort = context.WithCancel(context.Background())
	c.health = g.Health != nil
	c.fixed = c.header(req)
	mdesc, err := c.resolve(req)
	if err != nil {
		return nil, fmt.Errorf("grpc method %s: %w", g.Method, err)
	}
	c.input = mdesc.Input()
	message, fixed := g.Message.Literal()
	if !fixed {
		c.message = g.Message
		return c, nil
	}
	msg, err := grpcdesc.Encode(c.input, []byte(message))
	if err != nil {
		return nil, fmt.Errorf("grpc.message: %w", err)
	}
	c.body = appendGRPCFrame(nil, msg)
	return c, nil
}

// header writes the fields every call sends, in grpc-go's order: the
// pseudo-header fields, the content type, the deadline (as grpc-timeout,
// which the server enforces too), then the credentials and the metadata
// that does not vary; c.varying gets the rest.
func (c *grpcClient) header(req *plan.Request) []byte {
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

// get returns the slot's connection, dialling one when there is none that
// takes a stream.
func (s *grpcSlot) get(c *grpcClient, deadline time.Time) (*h2.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.conn.Usable() {
		return s.conn, nil
	}
	s.conn = nil // a connection going away ends by itself: its streams finish first
	nc, raw, err := openConn(c.aborted, c.addr, c.tls, deadline, &c.conns)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol != "h2" {
		c.conns.remove(raw)
		raw.Close()
		return nil, fmt.Errorf("tls: the server chose %q by ALPN, not h2", tc.ConnectionState().NegotiatedProtocol)
	}
	conn, err := startH2(nc, raw, &c.conns, c.opts, deadline)
	if err != nil {
		return nil, err
	}
	s.conn = conn
	return conn, nil
}

func (s *grpcSlot) close() {
	s.mu.Lock()
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// NewConn returns one user's Conn, on the next of the connections; its
// templated calls are written with vars.
func (c *grpcClient) NewConn(vars *template.Vars) Conn {
	slot := c.slots[(c.next.Add(1)-1)%uint64(len(c.slots))]
	w := &grpcConn{client: c, slot: slot, vars: vars}
	w.req = h2.Request{Header: c.fixed, Body: c.body}
	if c.health {
		w.req.Keep = make([]byte, 0, maxHealthReply)
	}
	return w
}

// maxHealthReply is how much of a health check's reply is kept: a
// HealthCheckResponse is a status, a few bytes; a larger reply is not one
// (INTERNAL, grpc_outcome.go).
const maxHealthReply = 4 << 10

// Abort cuts short every call under way and closes the connections.
func (c *grpcClient) Abort() {
	c.abort()
	c.Close()
}

// Close closes the connections; a call afterwards dials again.
func (c *grpcClient) Close() {
	for _, s := range c.slots {
		s.close()
	}
	for _, nc := range c.conns.drain() {
		nc.Close() // one still in its handshake
	}
}

// grpcConn is one worker's calls, on one of the client's connections.
type grpcConn struct {
	client *grpcClient
	slot   *grpcSlot
	req    h2.Request     // the call: the client's, or written per call
	vars   *template.Vars // the values of the call under way
	text   []byte         // a templated message's JSON, written anew per call
	body   []byte         // its frame
	block  []byte         // the header block with templated metadata
	value  []byte         // a templated metadata value
}

// Do makes one call, ending it at deadline.
func (w *grpcConn) Do(deadline time.Time) (code result.Code, o result.Outcome) {
	c := w.client
	if c.message != nil || c.varying != nil {
		if err := w.render(); err != nil {
			return result.Code{}, result.Other
		}
	}
	for try := 0; ; try++ {
		conn, err := w.slot.get(c, deadline)
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
func (w *grpcConn) render() error {
	c := w.client
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

// Close does nothing: the connection is the client's, shared.
func (w *grpcConn) Close() {}
