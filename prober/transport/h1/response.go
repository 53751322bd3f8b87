package h1

import (
	"errors"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// The lean client's HTTP/1.1 response reader. It parses in place in the
// connection's read buffer and keeps of the headers only what frames the
// body, so reading a response allocates nothing. It reads what
// net/http.ReadResponse and its Transport read, and refuses what they refuse
// (FuzzReadResponse holds it to that), so that both client paths give one
// outcome for the same bytes.

// maxChunkLine bounds a chunk-size line, as net/http does.
const maxChunkLine = 4096

// transportReadBuffer is the size of net/http.Transport's read buffer,
// within which it wants to see the end of a chunked body's trailers.
const transportReadBuffer = 4 << 10

// Protocol errors of the lean client: the peer answered, but not in HTTP/1.1.
// They classify as Other.
var (
	errMalformedStatus = errors.New("malformed HTTP status line")
	errMalformedHeader = errors.New("malformed HTTP response header")
	errMalformedLength = errors.New("malformed Content-Length")
	errUnsupportedTE   = errors.New("unsupported Transfer-Encoding")
	errMalformedChunk  = errors.New("malformed chunked encoding")
	errTrailerEOF      = errors.New("unexpected end of the stream in trailers")
	errHeaderTooLarge  = errors.New("response headers too large")
)

// Header kinds the reader looks at: those that frame the body or say
// whether the connection stays open.
const (
	hdrOther = iota
	hdrContentLength
	hdrTransferEncoding
	hdrConnection
	hdrUpgrade
)

// head is what a response's status line and headers say about it.
type head struct {
	code         int
	major, minor int
	// Content-Length: how many, the first one's value, whether they differ.
	lengths      int
	length       int64
	lengthBad    bool
	lengthDiffer bool
	firstLength  [20]byte // the first value; a longer one differs from any other
	firstLen     int
	// Transfer-Encoding: how many, and whether the one is "chunked".
	codings int
	chunked bool
	// Connection tokens, and the first Upgrade value.
	close, keepAlive, connUpgrade bool
	upgrades                      int
	upgrade                       bool
	// The header line being read, kept until its continuation lines are
	// known: the value of a framing header is what they all say.
	pending   int
	value     [256]byte
	valueLen  int
	valueLong bool
}

// readResponse reads one final response, skipping interim 1xx ones, and
// discards its body. keep reports whether the connection can carry another
// request; started whether any byte of a response arrived.
func (fc *conn) readResponse() (code int, keep, started bool, err error) {
	budget := wire.MaxHeaderBytes
	var h head
	var length int64
	for {
		fc.keep.start()
		started, err = fc.readHead(&h, &budget, started)
		if err == nil {
			length, err = h.framing(fc.head)
		}
		if err != nil {
			return 0, false, started, err
		}
		if h.code < 100 || h.code >= 200 || h.code == 101 {
			break
		}
		// An interim response; the final one follows.
	}
	keep = h.keep() && length >= 0
	fc.keep.framed(h.chunked, length)
	var whole bool
	switch {
	case h.code == 101 && h.upgrade && h.connUpgrade:
		// The server switched the connection to another protocol, though
		// the request asked for none: what follows is no longer HTTP and
		// ends with the connection, as net/http hands it over.
		whole, err = fc.discardToEOF()
		keep = false
	case h.code == 101:
		// No switch after all: a final response without a body, after
		// which net/http does not reuse the connection.
		return h.code, false, true, nil
	case length == 0:
		return h.code, keep, true, nil
	case h.chunked:
		whole, err = fc.discardChunked()
		keep = h.keep()
	case length < 0:
		whole, err = fc.discardToEOF()
	default:
		whole, err = fc.discardN(length)
	}
	if err != nil {
		return 0, false, true, err
	}
	return h.code, keep && whole, true, nil
}

// keep says whether the response lets the connection carry another
// request; net/http reuses none after a status below 200.
func (h *head) keep() bool {
	switch {
	case h.code < 200 || h.major < 1:
		return false
	case h.major == 1 && h.minor == 0:
		return !h.close && h.keepAlive
	}
	return !h.close
}

// framing says how the body is delimited, as net/http decides it: its
// length, or -1 for a body that ends with the connection (h.chunked aside).
func (h *head) framing(headRequest bool) (int64, error) {
	// net/http frames an "HTTP/0.0" response as HTTP/1.1 (and closes it).
	http11 := h.major > 1 || h.major == 1 && h.minor >= 1 || h.major == 0 && h.minor == 0
	if h.codings > 0 && http11 {
		// One coding only, and chunked: anything else is refused, as a
		// defence against request smuggling.
		if h.codings > 1 || !h.chunked {
			return 0, errUnsupportedTE
		}
	} else {
		h.chunked = false // HTTP/1.0 has no transfer codings
	}
	if h.lengthDiffer || h.lengths > 0 && h.lengthBad {
		return 0, errMalformedLength
	}
	switch {
	case headRequest, h.code/100 == 1, h.code == 204, h.code == 304:
		return 0, nil
	case h.chunked:
		return -1, nil
	case h.lengths > 0:
		return h.length, nil
	}
	return -1, nil
}

// readHead reads a status line and its headers into h. started says whether
// an earlier response of the exchange arrived, and comes back true once any
// byte of this one has.
func (fc *conn) readHead(h *head, budget *int, started bool) (bool, error) {
	line, truncated, err := fc.readLine(budget)
	if err != nil {
		if len(line) == 0 && !started {
			return false, err
		}
		return true, unexpectedEOF(err)
	}
	*h = head{}
	if !h.status(line) {
		return true, errMalformedStatus
	}
	if truncated {
		if err := fc.skipLine(budget); err != nil { // a long reason phrase
			return true, err
		}
	}
	return true, fc.readHeaders(budget, h, fc.keep)
}

// How a piece of a header line adds to the headers.
const (
	newHeader    = iota // a header line, or its start
	continuation        // an obsolete folded line, joined with a space
	rest                // the rest of a line longer than the read buffer
)
