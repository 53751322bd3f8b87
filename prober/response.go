package prober

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// The lean client's HTTP/1.1 response reader. It parses in place in the
// connection's read buffer and keeps of the headers only what frames the
// body, so reading a response allocates nothing. It reads what
// net/http.ReadResponse reads and refuses what it refuses (the fuzz test of
// response_fuzz_test.go holds it to that), so that both client paths give
// one outcome for the same bytes.

// maxHeaderBytes bounds the status lines and headers of one exchange,
// interim 1xx responses included: net/http's Transport's own default
// (MaxResponseHeaderBytes), which the std path keeps, so that both paths
// refuse the same responses.
const maxHeaderBytes = 10 << 20

// Protocol errors of the lean client: the peer answered, but not in HTTP/1.1.
// They classify as Other.
var (
	errMalformedStatus = errors.New("malformed HTTP status line")
	errMalformedHeader = errors.New("malformed HTTP response header")
	errMalformedLength = errors.New("malformed Content-Length")
	errMalformedChunk  = errors.New("malformed chunked encoding")
	errHeaderTooLarge  = errors.New("response headers too large")
)

// head is what a response's status line and headers say about it.
type head struct {
	code          int
	http10        bool
	contentLength int64 // -1 when absent
	chunked       bool  // the final transfer coding is chunked
	otherCoding   bool  // some other transfer coding
	connClose     bool
	connKeepAlive bool
	connUpgrade   bool // Connection names upgrade
	upgrade       bool // an Upgrade header with a value
}

// readResponse reads one final response, skipping interim 1xx ones, and
// discards its body. keep reports whether the connection can carry another
// request; started whether any byte of a response arrived.
func (fc *fastConn) readResponse() (code int, keep, started bool, err error) {
	budget := maxHeaderBytes
	var h head
	for {
		h, started, err = fc.readHead(&budget, started)
		if err != nil {
			return 0, false, started, err
		}
		if h.code < 100 || h.code >= 200 || h.code == 101 {
			break
		}
		// An interim response; the final one follows.
	}
	keep = !h.connClose && (!h.http10 || h.connKeepAlive)
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
	case fc.c.head || h.code == 204 || h.code == 304:
		return h.code, keep, true, nil
	case h.chunked && !h.otherCoding:
		whole, err = fc.discardChunked()
	case h.chunked || h.otherCoding || h.contentLength < 0:
		// Delimited by the close of the connection.
		whole, err = fc.discardToEOF()
		keep = false
	default:
		whole, err = fc.discardN(h.contentLength)
	}
	if err != nil {
		return 0, false, true, err
	}
	return h.code, keep && whole, true, nil
}

// readHead reads a status line and its headers. started says whether an
// earlier response of the exchange arrived, and comes back true once any
// byte of this one has.
func (fc *fastConn) readHead(budget *int, started bool) (h head, _ bool, err error) {
	line, truncated, err := fc.readLine(budget)
	if err != nil {
		if len(line) == 0 && !started {
			return h, false, err
		}
		return h, true, unexpectedEOF(err)
	}
	var ok bool
	if h.code, h.http10, ok = parseStatusLine(line); !ok {
		return h, true, errMalformedStatus
	}
	if truncated {
		if err := fc.skipLine(budget); err != nil {
			return h, true, err
		}
	}
	h.contentLength = -1
	for {
		line, truncated, err := fc.readLine(budget)
		if err != nil {
			return h, true, unexpectedEOF(err)
		}
		if len(line) == 0 {
			return h, true, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			// An obsolete folded continuation line: ignore it.
		} else if err := h.header(line, truncated); err != nil {
			return h, true, err
		}
		if truncated {
			if err := fc.skipLine(budget); err != nil {
				return h, true, err
			}
		}
	}
}

// header notes what one header line says about the framing of the body.
// A truncated line is longer than the read buffer: no framing header's.
func (h *head) header(line []byte, truncated bool) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return errMalformedHeader
	}
	name, value := line[:colon], trimSpace(line[colon+1:])
	switch {
	case equalFoldLower(name, "content-length"):
		n, ok := parseContentLength(value)
		if truncated || !ok || h.contentLength >= 0 && n != h.contentLength {
			return errMalformedLength
		}
		h.contentLength = n
	case equalFoldLower(name, "transfer-encoding"):
		if truncated {
			return errMalformedHeader
		}
		// Only a final chunked coding frames the body; any other
		// coding leaves it delimited by the connection's close.
		last := value
		if i := bytes.LastIndexByte(value, ','); i >= 0 {
			last = trimSpace(value[i+1:])
		}
		if equalFoldLower(last, "chunked") {
			h.chunked = true
		} else if len(value) > 0 {
			h.otherCoding = true
		}
	case equalFoldLower(name, "connection"):
		for v := value; len(v) > 0; {
			tok := v
			if i := bytes.IndexByte(v, ','); i >= 0 {
				tok, v = v[:i], v[i+1:]
			} else {
				v = nil
			}
			tok = trimSpace(tok)
			switch {
			case equalFoldLower(tok, "close"):
				h.connClose = true
			case equalFoldLower(tok, "keep-alive"):
				h.connKeepAlive = true
			case equalFoldLower(tok, "upgrade"):
				h.connUpgrade = true
			}
		}
	case equalFoldLower(name, "upgrade"):
		h.upgrade = h.upgrade || len(value) > 0
	}
	return nil
}

// readLine reads one line without its line ending. A line longer than the
// read buffer comes back truncated to what the buffer holds; the caller
// looks at that part and then calls skipLine. The budget counts header bytes.
// A line cut by the end of the stream is a line, as net/textproto reads it:
// the end shows at the next read.
func (fc *fastConn) readLine(budget *int) (line []byte, truncated bool, err error) {
	line, err = fc.br.ReadSlice('\n')
	*budget -= len(line)
	if *budget < 0 {
		return nil, false, errHeaderTooLarge
	}
	switch err {
	case nil:
	case bufio.ErrBufferFull:
		return line, true, nil
	case io.EOF:
		if len(line) > 0 {
			return line, false, nil
		}
		return nil, false, io.EOF
	default:
		return line, false, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, false, nil
}

// skipLine drops the rest of a line readLine returned truncated.
func (fc *fastConn) skipLine(budget *int) error {
	for {
		line, err := fc.br.ReadSlice('\n')
		*budget -= len(line)
		if *budget < 0 {
			return errHeaderTooLarge
		}
		switch err {
		case nil:
			return nil
		case bufio.ErrBufferFull:
		default:
			return unexpectedEOF(err)
		}
	}
}

// discardN reads n body bytes and drops them; whole is false when n is over
// the body limit and the connection must be closed instead of read on.
func (fc *fastConn) discardN(n int64) (whole bool, err error) {
	if n > maxBodyBytes {
		return false, unexpectedEOF(fc.discard(maxBodyBytes))
	}
	return true, unexpectedEOF(fc.discard(n))
}

// discard drops n bytes: from the read buffer, then straight from the
// connection into a scratch buffer, so a large body costs few reads.
func (fc *fastConn) discard(n int64) error {
	br := fc.br
	if b := int64(br.Buffered()); b >= n {
		br.Discard(int(n))
		return nil
	} else if b > 0 {
		br.Discard(int(b))
		n -= b
	}
	if n <= int64(br.Size()) {
		_, err := br.Discard(int(n))
		return err
	}
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	buf := *bp
	for n > 0 {
		m, err := fc.nc.Read(buf[:min(n, int64(len(buf)))])
		n -= int64(m)
		if err != nil && n > 0 {
			return err
		}
	}
	return nil
}

// discardToEOF drops a body delimited by the close of the connection.
func (fc *fastConn) discardToEOF() (whole bool, err error) {
	br := fc.br
	var total int64
	for total <= maxBodyBytes {
		n := br.Buffered()
		if n == 0 {
			if _, err := br.Peek(1); err != nil {
				if err == io.EOF {
					return true, nil
				}
				return false, err
			}
			n = br.Buffered()
		}
		n = int(min(int64(n), maxBodyBytes+1-total))
		br.Discard(n)
		total += int64(n)
	}
	return false, nil
}

// discardChunked drops a chunked body and its trailers.
func (fc *fastConn) discardChunked() (whole bool, err error) {
	var total int64
	budget := maxHeaderBytes
	for {
		line, truncated, err := fc.readLine(&budget)
		if err != nil {
			return false, unexpectedEOF(err)
		}
		if truncated {
			return false, errMalformedChunk
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, ok := parseHex(trimSpace(line))
		if !ok {
			return false, errMalformedChunk
		}
		if size == 0 {
			break
		}
		if total+size > maxBodyBytes {
			return false, unexpectedEOF(fc.discard(maxBodyBytes - total))
		}
		if err := fc.discard(size); err != nil {
			return false, unexpectedEOF(err)
		}
		total += size
		line, _, err = fc.readLine(&budget)
		if err != nil {
			return false, unexpectedEOF(err)
		}
		if len(line) != 0 {
			return false, errMalformedChunk
		}
		budget = maxHeaderBytes
	}
	for { // trailers, up to the empty line
		line, truncated, err := fc.readLine(&budget)
		if err != nil {
			return false, unexpectedEOF(err)
		}
		if truncated {
			if err := fc.skipLine(&budget); err != nil {
				return false, err
			}
			continue
		}
		if len(line) == 0 {
			return true, nil
		}
	}
}

// unexpectedEOF turns the end of the stream inside a response into the error
// that says so.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseStatusLine parses "HTTP/1.x SSS[ reason]".
func parseStatusLine(line []byte) (code int, http10, ok bool) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
		len(line) > 12 && line[12] != ' ' {
		return 0, false, false
	}
	if line[7] < '0' || line[7] > '9' {
		return 0, false, false
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		code = code*10 + int(c-'0')
	}
	return code, line[7] == '0', true
}

func parseContentLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | int64(c)
	}
	return n, true
}

// equalFoldLower compares b, in any case, with lower, given in lower case.
func equalFoldLower(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
