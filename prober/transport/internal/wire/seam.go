package wire

import (
	"net/http"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Conn is one user's connection: one keep-alive TCP connection (or a
// WebSocket session, or a share of an HTTP/2 connection), redialled when
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

// Capturer is a Conn that hands every response to the engine, for a
// flow's captures (docs/templates.md, "Flows") and a request's script
// (docs/scripts.md), and sends a script's message in place of its
// request when m is not nil. read gets the outcome the status implies,
// the status, the headers and the body (up to MaxBodyBytes), and returns
// the outcome to report.
type Capturer interface {
	Conn
	DoCapture(deadline time.Time, m *plan.Message, read Read) (result.Code, result.Outcome)
}

// Read is what reads a response for DoCapture.
type Read func(o result.Outcome, status int, h http.Header, body []byte) result.Outcome

// Stream is one user's stream of messages, each on its own schedule (a
// gRPC stream, docs/grpc.md "Streams"): every message is an attempt.
type Stream interface {
	// Conn's Do makes one exchange on a stream of its own: one message
	// and its answer, for the settle between steps.
	Conn
	// Run streams until until, then waits for the answers of the messages
	// under way (each bounded by the probe's timeout), handing every
	// message to m as it ends, from any goroutine.
	Run(until time.Time, m Messages)
}

// Messages takes the messages of a stream as they end.
type Messages interface {
	// Message takes one message: its outcome and code, the time its
	// latency runs from (its intended send time, or the arrival of the
	// message before it) and when it ended.
	Message(o result.Outcome, code result.Code, from, finished time.Time)
	// Dropped takes a message due at due that was not sent: held back by
	// flow control past its bound, or beyond the stream's bound of
	// unanswered messages.
	Dropped(due time.Time)
}

// Mux sends one fixed request on connections of its own, for an event loop
// that drives it from one goroutine and wakes on its own schedule
// (docs/measurement.md, "The open loop's event loops"): nothing it does
// blocks or parks. Connections are numbered from 0; a request's connection
// names it until its answer.
type Mux interface {
	// Send writes the request on an idle connection (dialling it again
	// when it was closed), or, when grow is true and none is idle, on a
	// new one. It returns the connection, or false when none could take
	// it.
	Send(grow bool) (conn int, ok bool)
	// Conns is how many connections Send has made so far.
	Conns() int
	// Opening reports connections being opened beside the loop (TLS
	// handshakes, on goroutines of their own): they need the cores a loop
	// keeps while it waits.
	Opening() bool
	// Answers appends to dst the requests that ended since the last call,
	// answered or failed, and returns it.
	Answers(dst []Answer) []Answer
	// Drop gives up on conn's request under way and closes it.
	Drop(conn int)
	// Close closes every connection.
	Close()
}

// Answer is how a Mux's request ended: its code (zero without a complete
// response), its outcome, and when: the kernel's receive time of the
// response's last bytes, or when the failure was found.
type Answer struct {
	Conn    int
	Code    result.Code
	Outcome result.Outcome
	At      time.Time
}
