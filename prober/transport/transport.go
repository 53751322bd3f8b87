// Package transport is the seam between the engine and the ways loadprobe
// talks to a target, one package each: h1 (the lean HTTP client, HTTP/1.1
// and, over TLS, HTTP/2 by ALPN on h2's connections), std (net/http, for
// what only it sends), h3 (HTTP/3 over QUIC), ws (WebSocket sessions),
// grpc (unary calls on h2's connections, and streams). Choose is the one switch that picks a request's transport;
// PathOf names the same choice without building it. No transport imports
// the engine.
package transport

import (
	"context"
	"fmt"
	"strconv"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/prober/transport/grpc"
	"github.com/loadprobe/loadprobe/prober/transport/h1"
	"github.com/loadprobe/loadprobe/prober/transport/h3"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/prober/transport/std"
	"github.com/loadprobe/loadprobe/prober/transport/ws"
)

// Transport hands each user a Conn of its own.
type Transport interface {
	// NewConn returns one user's connection, whose templated requests are
	// written with vars as the user sets them before each Do. It does not
	// dial: the first Do does.
	NewConn(vars *template.Vars) Conn
	// Abort cuts short every dial and attempt under way, from any
	// goroutine, and releases the connections: the load stops at once
	// instead of a timeout later. No Conn can be used afterwards.
	Abort()
	// Close releases the connections of every Conn still open. Call it
	// once the users have stopped; a Conn used afterwards redials.
	Close()
}

// Conn is one user's connection (wire.Conn).
type Conn = wire.Conn

// Muxer is a Transport that offers its request to an event loop: h1's,
// for HTTP/1.1, plain or over TLS, with one fixed request on Linux.
type Muxer interface {
	// NewMux returns a Mux of connections of its own; the error says why
	// the transport's requests need more.
	NewMux() (Mux, error)
}

// Mux is an event loop's wire (wire.Mux); Answer, how one of its
// requests ended.
type (
	Mux    = wire.Mux
	Answer = wire.Answer
)

// Streams hands each user a Stream of its own (docs/grpc.md, "Streams").
type Streams interface {
	// NewStream returns one user's stream, whose templated messages are
	// written with vars; next, when not nil, sets vars to the values of
	// the next message. It opens nothing: its Run does.
	NewStream(vars *template.Vars, next func()) Stream
	// Abort and Close are a Transport's.
	Abort()
	Close()
}

// Stream is one user's stream of messages (wire.Stream).
type Stream = wire.Stream

// Messages takes a stream's messages (wire.Messages).
type Messages = wire.Messages

// Capturer is a Conn that hands a response to a flow's captures
// (wire.Capturer): every Conn of a transport chosen with capture is one.
type Capturer = wire.Capturer

// kind is a way of talking to a target.
type kind int

const (
	lean kind = iota
	netHTTP
	webSocket
	gRPC
	gRPCStream
	quic
)

// Path is the way a request reaches its target, as Choose chooses it.
type Path struct {
	kind kind
	req  *plan.Request
	why  string // what needs net/http
}

// PathOf is the path of req; capture asks for a client that can hand a
// response to a flow's captures, as a request's script does.
func PathOf(req *plan.Request, capture bool) Path {
	capture = capture || req.Script != nil
	switch {
	case req.WebSocket():
		return Path{kind: webSocket, req: req}
	case req.GRPC != nil && req.GRPC.Stream != nil:
		return Path{kind: gRPCStream, req: req}
	case req.GRPC != nil:
		return Path{kind: gRPC, req: req}
	case req.HTTP3:
		return Path{kind: quic, req: req}
	case req.NetHTTP != "":
		return Path{kind: netHTTP, req: req, why: req.NetHTTP}
	case capture && req.URL.Scheme == "https" && req.HTTP2:
		// The lean HTTP/2 client reads a response to its status and end.
		return Path{kind: netHTTP, req: req, why: "capture, HTTP/2 by ALPN"}
	}
	return Path{kind: lean, req: req}
}

// String names the path, for `loadprobe run` to say (docs/configuration.md,
// "Which client sends the requests").
func (p Path) String() string {
	u := p.req.URL
	switch {
	case p.kind == webSocket:
		return "WebSocket (gorilla/websocket)"
	case p.kind == gRPC:
		return fmt.Sprintf("gRPC (lean HTTP/2 client, connections: %d)", p.req.GRPC.Connections)
	case p.kind == gRPCStream:
		return fmt.Sprintf("gRPC %s streams (grpc-go, connections: %d)", p.req.GRPC.Stream.Kind, p.req.GRPC.Connections)
	case p.kind == quic && p.req.HTTP3Connections > 0:
		return fmt.Sprintf("HTTP/3 (QUIC, quic-go, connections: %d)", p.req.HTTP3Connections)
	case p.kind == quic:
		return "HTTP/3 (QUIC, quic-go)"
	case p.kind == netHTTP:
		return "net/http (" + p.why + ")"
	case u.Scheme == "https" && p.req.HTTP2 && p.req.StreamsPerConnection > 1:
		return "lean client over TLS (HTTP/1.1 or HTTP/2 by ALPN, " +
			strconv.Itoa(p.req.StreamsPerConnection) + " streams per HTTP/2 connection)"
	case u.Scheme == "https" && p.req.HTTP2:
		return "lean client over TLS (HTTP/1.1 or HTTP/2 by ALPN)"
	case u.Scheme == "https":
		return "lean HTTP/1.1 client over TLS"
	}
	return "lean HTTP/1.1 client"
}

// Conns is how many connections n users may hold at once: one each, but
// for gRPC, whose calls share grpc.connections, and HTTP/3 with
// http3_connections. (Over https, a server that
// picks h2 lets http2.streams_per_connection users share one, but it may
// pick HTTP/1.1.)
func (p Path) Conns(n int) int {
	switch {
	case p.kind == gRPC || p.kind == gRPCStream:
		return min(n, p.req.GRPC.Connections)
	case p.kind == quic && p.req.HTTP3Connections > 0:
		return min(n, p.req.HTTP3Connections)
	}
	return n
}

// Choose builds the transport of req, a request of the probe name, on its
// path (PathOf). handshakes, when not nil, takes a WebSocket probe's
// handshakes and close codes. What building asks of the server (a gRPC
// method's descriptors) gives up when ctx ends.
func Choose(ctx context.Context, name string, req *plan.Request, capture bool, handshakes live.Handshakes) (Transport, Path, error) {
	path := PathOf(req, capture)
	var t Transport
	var err error
	switch path.kind {
	case webSocket:
		t, err = adapt(ws.New(req, handshakes))
	case gRPC:
		t, err = adapt(grpc.New(ctx, req))
	case netHTTP:
		t, err = adapt(std.New(req, name))
	case quic:
		t, err = adapt(h3.New(req, name))
	default:
		t, err = adapt(h1.New(req))
	}
	return t, path, err
}

// ChooseStreams builds the streams of req, whose grpc.stream is set, as
// Choose builds a Transport; sink, when not nil, takes the streams opened
// and ended.
func ChooseStreams(ctx context.Context, req *plan.Request, sink live.Streams) (Streams, Path, error) {
	path := PathOf(req, false)
	s, err := grpc.NewStreams(ctx, req, sink)
	if err != nil {
		return nil, path, err
	}
	return s, path, nil
}

// client is what each transport package's client is.
type client interface {
	NewConn(vars *template.Vars) wire.Conn
	Abort()
	Close()
}

// adapt returns a client built by a transport package as a Transport.
func adapt[C client](c C, err error) (Transport, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}
