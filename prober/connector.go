package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// The transport seam. Every way a request reaches its target (the lean
// HTTP/1.1 client, net/http, a WebSocket session, a gRPC call) is a
// connector, which hands each user a Conn of its own. What only some of
// them have is an optional interface, which the engine looks for once,
// when it builds a workload, never per attempt.

// connector is what the engine needs of a request's transport.
type connector interface {
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

// Conn is one user's connection: one keep-alive TCP connection (or a
// WebSocket session, or a share of a gRPC connection), redialled when
// needed, or a fresh connection per attempt when keep_alive is false. A
// Conn is not safe for concurrent use; each user has its own.
type Conn interface {
	// Do sends the request and reads the whole response, giving up at
	// deadline. It returns the response's code (zero when there was no
	// complete response) and the outcome.
	Do(deadline time.Time) (code result.Code, o result.Outcome)
	// Close closes the connection.
	Close()
}

// newConnector returns the connector of req, a request of the probe name:
// its WebSocket sessions, its gRPC calls, or its HTTP requests, on a
// client whose Conns can capture from a response when capture is set.
func newConnector(name string, req *plan.Request, capture bool, handshakes live.Handshakes) (connector, error) {
	switch {
	case req.WebSocket():
		return newWSClient(req, handshakes)
	case req.GRPC != nil:
		return newGRPCClient(req)
	}
	return newClient(req, name, capture)
}
