package grpc

import (
	"encoding/binary"
	"errors"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/loadprobe/loadprobe/prober/transport/h2"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// The outcome of a call (docs/grpc.md, "Outcomes"): OK is a success and
// any other status the server returned an http_error with the status as
// its code; the client's own deadline is a timeout; a call that never
// reached the service (the connection was refused, reset, its TLS
// handshake or its name lookup failed) is counted by that reason, as an
// HTTP request would be. The status is read as grpc-go reads it
// (callStatus), so that both clients give one call one outcome.

// healthServing is grpc.health.v1's SERVING, and healthNotServing its
// NOT_SERVING.
const (
	healthServing    = 1
	healthNotServing = 2
)

// outcome names the outcome of a call the server answered by deadline.
func (c *Client) outcome(resp h2.Response, deadline time.Time) (code result.Code, o result.Outcome) {
	st := callStatus(resp)
	if st == codes.OK {
		st = replyStatus(resp)
	}
	switch {
	case st == codes.OK && !c.health:
		return result.GRPCStatus(0), result.Success
	case st == codes.OK:
		return healthOutcome(resp.Body)
	case st == codes.DeadlineExceeded && c.nearDeadline(deadline):
		// The call carried its deadline (grpc-timeout): the server that
		// gave up on it answered just before the client did.
		return result.Code{}, result.Timeout
	}
	return result.GRPCStatus(uint32(st)), result.HTTPError
}

// failure names the outcome of a call that got no answer by deadline.
func (c *Client) failure(err error, deadline time.Time) result.Outcome {
	var se h2.StreamError
	if errors.As(err, &se) && se.FromPeer && se.Code == http2.ErrCodeCancel && c.nearDeadline(deadline) {
		// grpc-go's server resets a call whose grpc-timeout has passed:
		// the client's deadline, enforced by the server a moment before
		// the client's own timer.
		return result.Timeout
	}
	o := wire.Classify(err)
	if o == result.Reset && c.certAsked.Load() {
		// Closed by a server that asked for the client certificate the
		// probe does not have: the TLS handshake's verdict.
		return result.TLS
	}
	return o
}

// callStatus is the call's status as grpc-go reads a response: one whose
// headers do not name gRPC's content type by its HTTP status (gRPC's
// table of them); else the grpc-status of the header block that ended
// the stream, UNKNOWN when it has none; INTERNAL when the stream ended
// without such a block.
func callStatus(resp h2.Response) codes.Code {
	g := resp.GRPC
	switch {
	case !g.ContentType:
		return httpStatusCode(resp.Status)
	case !g.EndedByFields:
		return codes.Internal
	case !g.HasStatus:
		return codes.Unknown
	}
	return codes.Code(g.Status)
}

// messagePrefix is a gRPC message's prefix: a flag byte (1: compressed)
// and the message's length.
const messagePrefix = 5

// maxReceiveMessage is grpc-go's default bound on a message a client
// receives.
const maxReceiveMessage = 4 << 20

// replyStatus is what grpc-go makes of an OK call's reply from the prefix
// of its message: RESOURCE_EXHAUSTED for a length past its receive bound,
// INTERNAL for the compressed flag without a grpc-encoding to undo it. A
// broken proxy or serializer is not a healthy reply.
func replyStatus(resp h2.Response) codes.Code {
	b := resp.Body
	switch {
	case len(b) < messagePrefix:
		return codes.OK
	case b[0]&1 != 0 && !resp.GRPC.Encoded:
		return codes.Internal
	case binary.BigEndian.Uint32(b[1:messagePrefix]) > maxReceiveMessage:
		return codes.ResourceExhausted
	}
	return codes.OK
}

// httpStatusCode is gRPC's reading of the HTTP status of a response that
// is not gRPC's (grpc's doc/http-grpc-status-mapping.md): UNKNOWN for a
// 200 or any status the table does not name.
func httpStatusCode(s int) codes.Code {
	switch s {
	case 400:
		return codes.Internal
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.Unimplemented
	case 429, 502, 503, 504:
		return codes.Unavailable
	}
	return codes.Unknown
}

// nearDeadline reports whether the server's end of a call came so close
// to the client's deadline that it is that deadline, which the server
// received as the call's grpc-timeout less the time the call took to
// reach it: within a tenth of the timeout, at least 5 ms. An end earlier
// is the server's own (an upstream's deadline): an http_error.
func (c *Client) nearDeadline(deadline time.Time) bool {
	return time.Until(deadline) <= max(c.timeout/10, 5*time.Millisecond)
}

// healthOutcome reads the first gRPC message of an OK health check's
// reply: SERVING is a success; NOT_SERVING and an unset status are
// failures with codes of their own; a reply that is not a
// HealthCheckResponse is INTERNAL, as grpc-go fails to decode it.
func healthOutcome(body []byte) (result.Code, result.Outcome) {
	internal := result.GRPCStatus(uint32(codes.Internal))
	if len(body) < 5 || body[0] != 0 {
		return internal, result.HTTPError
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if uint64(n) > uint64(len(body)-5) {
		return internal, result.HTTPError
	}
	st, err := healthStatus(body[5 : 5+n])
	switch {
	case err != nil:
		return internal, result.HTTPError
	case st == healthServing:
		return result.GRPCStatus(0), result.Success
	case st == healthNotServing:
		return result.GRPCNotServing, result.HTTPError
	}
	return result.GRPCServingUnknown, result.HTTPError
}

// healthStatus reads field 1 (status) of a grpc.health.v1
// HealthCheckResponse.
func healthStatus(b []byte) (int32, error) {
	v, typ, err := findField(b, 1)
	if err != nil || v == nil || typ != protowire.VarintType {
		return 0, err
	}
	status, n := protowire.ConsumeVarint(v)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	return int32(status), nil
}

// findField is the encoded value of field num in message b, the last one
// when it repeats (as protobuf reads a singular field), and its wire type;
// nil when b has none.
func findField(b []byte, num protowire.Number) (value []byte, typ protowire.Type, err error) {
	for len(b) > 0 {
		n, t, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, 0, protowire.ParseError(l)
		}
		b = b[l:]
		l = protowire.ConsumeFieldValue(n, t, b)
		if l < 0 {
			return nil, 0, protowire.ParseError(l)
		}
		if n == num {
			value, typ = b[:l], t
		}
		b = b[l:]
	}
	return value, typ, nil
}
