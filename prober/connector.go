package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// The transport seam. Every way a probe reaches its target (the lean
// HTTP/1.1 client, net/http, a WebSocket session, a flow of steps) is a
// connector, which hands each worker a Conn of its own. What only some of
// them have is an optional interface, which the engine looks for once,
// when it builds the run or a connection, never per attempt.

// connector is what the engine needs of a probe's transport.
type connector interface {
	// NewConn returns one worker's connection. It does not dial: the
	// first Do does.
	NewConn() Conn
	// Abort cuts short every dial and attempt under way, from any
	// goroutine, and releases the connections: the load stops at once
	// instead of a timeout later. No Conn can be used afterwards.
	Abort()
	// Close releases the connections of every Conn still open. Call it
	// once the workers have stopped; a Conn used afterwards redials.
	Close()
}

// Conn is one worker's connection: one keep-alive TCP connection (or a
// WebSocket session, or a flow's virtual user), redialled when needed, or
// a fresh connection per attempt when keep_alive is false. A Conn is not
// safe for concurrent use; each worker has its own.
type Conn interface {
	// Do sends the request and reads the whole response, giving up at
	// deadline. It returns the response's code (zero when there was no
	// complete response) and the outcome.
	Do(deadline time.Time) (code result.Code, o result.Outcome)
	// Close closes the connection.
	Close()
}

// thinker is a Conn whose attempt includes think time (a flow's
// iteration), which its latency leaves out (docs/templates.md,
// "Flows": iteration time without think time).
type thinker interface {
	// thought is the think time of the attempt that ended last.
	thought() time.Duration
}

// levelFigures is a connector that keeps figures of its own per level:
// a flow's, of each of its steps.
type levelFigures interface {
	// startLevel empties the figures for the level measured from
	// measureFrom for window; no attempt is under way.
	startLevel(measureFrom time.Time, window time.Duration)
	// figures are the level's figures of each step, and the mean think
	// time of its iterations.
	figures(measured time.Duration) ([]result.FlowFigures, time.Duration)
}

// liveSteps is a connector whose parts have live series of their own: a
// flow's steps count the requests, so that the engine's Attempt, once
// per iteration, must count in none.
type liveSteps interface {
	// useLive gives the steps their series under live and returns the
	// Live the engine records in.
	useLive(sink live.Sink) live.Sink
}

// link is a worker's Conn with what the engine needs to know of it,
// found when the Conn is made.
type link struct {
	Conn
	think thinker // nil: the attempts do not think
}

func newLink(c Conn) link {
	t, _ := c.(thinker)
	return link{Conn: c, think: t}
}

// thought is the think time of the attempt the link ran last.
func (l link) thought() time.Duration {
	if l.think == nil {
		return 0
	}
	return l.think.thought()
}

// newConnector returns the connector of p, which config has compiled: the
// client of its flow's steps, its WebSocket sessions, its gRPC calls, or
// its HTTP request.
func newConnector(p *plan.Probe, sink live.Sink) (connector, error) {
	switch {
	case len(p.Flow) > 0:
		return newFlowClient(p)
	case p.Request.WebSocket():
		wl, _ := sink.(live.Handshakes)
		return newWSClient(p.Request, newVarSource(p), wl)
	case p.Request.GRPC != nil:
		return newGRPCClient(p.Request, newVarSource(p))
	}
	return newClient(p.Request, p.Name, false, newVarSource(p))
}
