package h2

import (
	"errors"
	"fmt"

	"golang.org/x/net/http2"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// Errors are worded as golang.org/x/net/http2's transport words them, so
// that one classification (wire.Classify) reads both HTTP/2 clients
// alike: a stream error or a GOAWAY is a reset of the target, a connection
// error a protocol failure.

// ErrUnprocessed is a request the server did not process (wire's).
var ErrUnprocessed = wire.ErrUnprocessed

// StreamError ends one stream: reset by the peer, or by the client for a
// malformed response.
type StreamError struct {
	StreamID uint32
	Code     http2.ErrCode
	FromPeer bool
	Cause    error
}

func (e StreamError) Error() string {
	switch {
	case e.FromPeer:
		return fmt.Sprintf("stream error: stream ID %d; %v; received from peer", e.StreamID, e.Code)
	case e.Cause != nil:
		return fmt.Sprintf("stream error: stream ID %d; %v; %v", e.StreamID, e.Code, e.Cause)
	}
	return fmt.Sprintf("stream error: stream ID %d; %v", e.StreamID, e.Code)
}

// ConnectionError ends the connection for a protocol error of the peer.
type ConnectionError http2.ErrCode

func (e ConnectionError) Error() string {
	return fmt.Sprintf("connection error: %s", http2.ErrCode(e))
}

// GoAwayError is the end of a connection the server had said it would close.
type GoAwayError struct {
	LastStreamID uint32
	Code         http2.ErrCode
}

func (e GoAwayError) Error() string {
	return fmt.Sprintf("http2: server sent GOAWAY and closed the connection; LastStreamID=%v, ErrCode=%v",
		e.LastStreamID, e.Code)
}

var (
	errMissingStatus    = errors.New("malformed response from server: missing status pseudo header")
	errMalformedStatus  = errors.New("malformed response from server: malformed non-numeric status pseudo header")
	errInterimEnd       = errors.New("1xx informational response with END_STREAM flag")
	errInterimTooLarge  = errors.New("header list too large")
	errHeaderListSize   = errors.New("http2: response header list larger than advertised limit")
	errInvalidField     = errors.New("invalid header field")
	errPseudoField      = errors.New("invalid pseudo header field")
	errBodyTooLong      = errors.New("net/http: server replied with more than declared Content-Length; truncated")
	errDataBeforeHeader = errors.New("received DATA before a HEADERS frame")
)
