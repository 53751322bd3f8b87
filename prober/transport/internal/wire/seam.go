package wire

import (
	"net/http"
	"time"

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

// Capturer is a Conn that can hand a response to a flow's captures
// (docs/templates.md, "Flows"): take reads the headers and the body
// (up to MaxBodyBytes) of a success; a response it finds nothing in
// fails the attempt as an http_error.
type Capturer interface {
	Conn
	DoCapture(deadline time.Time, take func(http.Header, []byte) bool) (result.Code, result.Outcome)
}
