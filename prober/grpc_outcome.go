package prober

import (
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loadprobe/loadprobe/result"
)

// The outcome of a call (docs/grpc.md, "Outcomes"): OK is a success and
// any other status the server returned an http_error with the status as
// its code; the client's own deadline is a timeout, whatever status
// grpc-go gives it; a call that never reached the service (the
// connection was refused, reset, its TLS handshake or its name lookup
// failed) is counted by that reason, as an HTTP request would be.

// healthServing is grpc.health.v1's SERVING, and healthNotServing its
// NOT_SERVING.
const (
	healthServing    = 1
	healthNotServing = 2
)

// outcome names the outcome of the call that ended with err; expired
// says the call's deadline had passed.
func (w *grpcConn) outcome(err error, expired bool, deadline time.Time) (code int, o result.Outcome) {
	if err == nil {
		if !w.client.health {
			return result.GRPCCode(0), result.Success
		}
		switch w.reply.status {
		case healthServing:
			return result.GRPCCode(0), result.Success
		case healthNotServing:
			return result.GRPCNotServing, result.HTTPError
		}
		return result.GRPCServingUnknown, result.HTTPError
	}
	if expired {
		return 0, result.Timeout
	}
	st, ok := status.FromError(err)
	if !ok {
		return 0, classify(err)
	}
	if st.Code() == codes.DeadlineExceeded && time.Until(deadline) <= deadlineSlack(w.client.timeout) {
		// grpc-go sends the deadline with the call (grpc-timeout): the
		// server that gave up on it answered just before the client did.
		return 0, result.Timeout
	}
	if o, local := transportOutcome(st, w.slot.dialErr.Load()); local {
		if o == result.Reset && w.client.certAsked.Load() {
			// Closed by a server that asked for the client certificate the
			// probe does not have: the TLS handshake's verdict.
			return 0, result.TLS
		}
		return 0, o
	}
	if st.Code() == codes.Canceled && w.client.base.Err() != nil {
		return 0, result.Other // cut short by Abort: the run is over
	}
	return result.GRPCCode(uint32(st.Code())), result.HTTPError
}

// deadlineSlack is how long before the client's deadline a server's
// DEADLINE_EXCEEDED is still the client's deadline, which the server
// received as the call's grpc-timeout, less the time the call took to
// reach it: a tenth of the timeout, at least 5 ms. One that came earlier
// is a deadline of the server's own (an upstream's): an http_error.
func deadlineSlack(timeout time.Duration) time.Duration {
	return max(timeout/10, 5*time.Millisecond)
}

// transportMessages begin the text of the statuses grpc-go makes itself
// when a call found no working connection, or lost it; grpc-go gives them
// no type of their own.
var transportMessages = []string{
	"connection error:",      // a dial or handshake failed (transport.ConnectionError)
	"last connection error:", // the connection is in backoff after a failure
	"error reading from server",
	"transport is closing",
	"connection closed before server preface received",
	"failed to write to the server", // grpc-go's text for a write on a dead connection
	"stream terminated by RST_STREAM",
	// A write on a connection the server closed, with the error's text
	// alone: in TLS 1.3 the client's handshake ends before the server
	// judges its certificate, and a rejected client finds the connection
	// gone when it sends its first call.
	"broken pipe",
	"connection reset by peer",
}

// transportOutcome reports whether st is one grpc-go made for a
// connection that failed (local), and the reason: the failed dial's own
// error when there was one, else what the text names.
func transportOutcome(st *status.Status, dialErr *error) (o result.Outcome, local bool) {
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable, codes.Internal:
	default:
		return 0, false
	}
	found := false
	for _, p := range transportMessages {
		if strings.Contains(msg, p) {
			found = true
			break
		}
	}
	if !found {
		return 0, false
	}
	if dialErr != nil && strings.Contains(msg, "while dialing") {
		return classify(*dialErr), true
	}
	switch o := classify(errors.New(msg)); {
	case o != result.Other:
		return o, true
	case strings.Contains(msg, "connection refused"):
		return result.Refused, true
	case strings.Contains(msg, "no such host"):
		return result.DNS, true
	}
	return result.Reset, true
}
