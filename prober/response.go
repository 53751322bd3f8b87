package prober

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// The lean client's HTTP/1.1 response reader. It parses in place in the
// connection's read buffer and keeps of the headers only what frames the
// body, so reading a response allocates nothing. It reads what
// net/http.ReadResponse and its Transport read, and refuses what they refuse
// (FuzzReadResponse holds it to that), so that both client paths give one
// outcome for the same bytes.

// maxHeaderBytes bounds the status lines and headers of one exchange,
// interim 1xx responses included: net/http's Transport's own default
// (MaxResponseHeaderBytes), which the std path keeps, so that both paths
// refuse the same responses.
const maxHeaderBytes = 10 << 20

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
	firstLength  [20]byte // the first value, when it is a number
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
func (fc *fastConn) readResponse() (code int, keep, started bool, err error) {
	budget := maxHeaderBytes
	var h head
	var length int64
	for {
		started, err = fc.readHead(&h, &budget, started)
		if err == nil {
			length, err = h.framing(fc.c.head)
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
	if h.codings > 0 && (h.major > 1 || h.major == 1 && h.minor >= 1) {
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
func (fc *fastConn) readHead(h *head, budget *int, started bool) (bool, error) {
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
	return true, fc.readHeaders(budget, h)
}

// How a piece of a header line adds to the headers.
const (
	newHeader    = iota // a header line, or its start
	continuation        // an obsolete folded line, joined with a space
	rest                // the rest of a line longer than the read buffer
)

// readHeaders reads header lines up to the empty line into h, as
// net/textproto reads them: continuation lines joined, each line trimmed.
func (fc *fastConn) readHeaders(budget *int, h *head) error {
	for first := true; ; first = false {
		line, truncated, err := fc.readLine(budget)
		if err != nil {
			return unexpectedEOF(err)
		}
		if len(line) == 0 && !truncated {
			h.endHeader()
			return nil
		}
		how := newHeader
		if line[0] == ' ' || line[0] == '\t' {
			if first {
				return errMalformedHeader
			}
			how = continuation
		}
		if !truncated {
			line = trimOWS(line)
		} else {
			line = bytes.TrimLeft(line, " \t")
		}
		if err := h.header(line, how); err != nil {
			return err
		}
		for truncated {
			if line, truncated, err = fc.readLine(budget); err != nil {
				return unexpectedEOF(err)
			}
			if !truncated {
				line = bytes.TrimRight(line, " \t")
			}
			if err := h.header(line, rest); err != nil {
				return err
			}
		}
	}
}

// header takes one header line or a piece of one.
func (h *head) header(line []byte, how int) error {
	if how != newHeader {
		if err := checkValue(line); err != nil {
			return err
		}
		if how == continuation {
			h.appendValue([]byte(" "))
		}
		h.appendValue(line)
		return nil
	}
	h.endHeader()
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok || !validHeaderName(name) {
		return errMalformedHeader
	}
	if err := checkValue(value); err != nil {
		return err
	}
	h.pending = headerKind(name)
	h.valueLen, h.valueLong = 0, false
	h.appendValue(value)
	return nil
}

func (h *head) appendValue(b []byte) {
	if h.pending == hdrOther {
		return
	}
	n := copy(h.value[h.valueLen:], b)
	h.valueLen += n
	h.valueLong = h.valueLong || n < len(b)
}

// endHeader notes what the header just read says, its value complete.
func (h *head) endHeader() {
	if h.pending == hdrOther {
		return
	}
	value := bytes.TrimLeft(h.value[:h.valueLen], " \t")
	long := h.valueLong
	switch h.pending {
	case hdrContentLength:
		value = trimOWS(value)
		h.lengths++
		if h.lengths == 1 {
			h.length, h.lengthBad = parseContentLength(value)
			h.lengthBad = h.lengthBad || long
			h.firstLen = copy(h.firstLength[:], value)
			if h.firstLen < len(value) {
				h.firstLen = -1 // too long to be a length: differs from any other
			}
		} else if long || h.firstLen < 0 || string(value) != string(h.firstLength[:h.firstLen]) {
			h.lengthDiffer = true
		}
	case hdrTransferEncoding:
		h.codings++
		h.chunked = !long && equalFoldLower(value, "chunked")
	case hdrConnection:
		h.connectionTokens(value)
	case hdrUpgrade:
		h.upgrades++
		if h.upgrades == 1 {
			h.upgrade = len(value) > 0
		}
	}
	h.pending = hdrOther
}

func (h *head) connectionTokens(v []byte) {
	for len(v) > 0 {
		var tok []byte
		tok, v, _ = bytes.Cut(v, []byte(","))
		tok = trimOWS(tok)
		switch {
		case equalFoldLower(tok, "close"):
			h.close = true
		case equalFoldLower(tok, "keep-alive"):
			h.keepAlive = true
		case equalFoldLower(tok, "upgrade"):
			h.connUpgrade = true
		}
	}
}

func headerKind(name []byte) int {
	switch {
	case equalFoldLower(name, "content-length"):
		return hdrContentLength
	case equalFoldLower(name, "transfer-encoding"):
		return hdrTransferEncoding
	case equalFoldLower(name, "connection"):
		return hdrConnection
	case equalFoldLower(name, "upgrade"):
		return hdrUpgrade
	}
	return hdrOther
}

// status parses a status line as net/http does: "HTTP/M.N", spaces, a
// three-character code (strconv.Atoi's syntax, not negative) and an
// optional reason after a space.
func (h *head) status(line []byte) bool {
	proto, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " ")
	code, _, _ := bytes.Cut(rest, []byte(" "))
	if len(code) != 3 {
		return false
	}
	sign := 1
	switch code[0] {
	case '+':
		code = code[1:]
	case '-':
		code, sign = code[1:], -1
	}
	n := 0
	for _, c := range code {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	if n*sign < 0 {
		return false
	}
	h.code = n
	if len(proto) != len("HTTP/1.1") || string(proto[:5]) != "HTTP/" || proto[6] != '.' ||
		!isDigit(proto[5]) || !isDigit(proto[7]) {
		return false
	}
	h.major, h.minor = int(proto[5]-'0'), int(proto[7]-'0')
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// validHeaderName reports a header name net/textproto accepts: token
// characters, and spaces, which it tolerates.
func validHeaderName(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c != ' ' && !isDigit(c) && !('a' <= c|0x20 && c|0x20 <= 'z') &&
			strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return false
		}
	}
	return true
}

// checkValue refuses a header value with a control character, as
// net/textproto does; obs-text (bytes from 0x80) is allowed.
func checkValue(v []byte) error {
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return errMalformedHeader
		}
	}
	return nil
}

// readLine reads one line without its line ending. A line longer than the
// read buffer comes back truncated to what the buffer holds; the next call
// returns the rest. The budget counts header bytes. A line cut by the end of
// the stream is a line, as net/textproto reads it: the end shows at the next
// read.
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

// discardChunked drops a chunked body and its trailers, as net/http's
// chunked reader reads them.
func (fc *fastConn) discardChunked() (whole bool, err error) {
	var total uint64
	var excess int64
	for {
		size, overhead, err := fc.chunkSize()
		if err != nil {
			return false, err
		}
		// At most 16 bytes of overhead per chunk plus twice its data, as
		// net/http allows: a sender cannot make the body mostly framing.
		excess = max(excess+int64(overhead)-16-2*int64(min(size, 1<<40)), 0)
		if excess > 16<<10 {
			return false, errMalformedChunk
		}
		if size == 0 {
			break
		}
		if size > maxBodyBytes-total {
			return false, unexpectedEOF(fc.discard(int64(maxBodyBytes - total)))
		}
		if err := fc.discard(int64(size)); err != nil {
			return false, unexpectedEOF(err)
		}
		total += size
		crlf, err := fc.br.Peek(2)
		if err != nil {
			return false, unexpectedEOF(err)
		}
		if string(crlf) != "\r\n" {
			return false, errMalformedChunk
		}
		fc.br.Discard(2)
	}
	return true, fc.readTrailers()
}

// chunkSize reads a chunk-size line: CRLF-terminated, shorter than
// maxChunkLine, extensions dropped. overhead is its length with the CRLF
// that ends the chunk's data.
func (fc *fastConn) chunkSize() (size, overhead uint64, err error) {
	line, err := fc.br.ReadSlice('\n')
	switch err {
	case nil:
	case bufio.ErrBufferFull:
		return 0, 0, errMalformedChunk
	default:
		return 0, 0, unexpectedEOF(err)
	}
	if cr := bytes.IndexByte(line, '\r'); cr < 0 || cr != len(line)-2 {
		return 0, 0, errMalformedChunk // a bare LF, or a CR inside
	}
	line = line[:len(line)-2]
	if len(line) >= maxChunkLine {
		return 0, 0, errMalformedChunk
	}
	overhead = uint64(len(line)) + 2
	line, _, _ = bytes.Cut(bytes.TrimRight(line, " \t"), []byte(";"))
	size, ok := parseHex(line)
	if !ok {
		return 0, 0, errMalformedChunk
	}
	return size, overhead, nil
}

// readTrailers reads the trailers after the last chunk, up to the empty
// line, as net/http does: an end of the stream there is an error of its
// own, and trailers must end with CRLF CRLF within the Transport's read
// buffer.
func (fc *fastConn) readTrailers() error {
	b, err := fc.br.Peek(2)
	switch {
	case string(b) == "\r\n":
		fc.br.Discard(2)
		return nil
	case len(b) < 2:
		return errTrailerEOF
	case err != nil:
		return err
	}
	for n := 4; ; n *= 2 {
		b, err := fc.br.Peek(min(n, transportReadBuffer))
		if bytes.Contains(b, []byte("\r\n\r\n")) {
			break
		}
		if err != nil || n >= transportReadBuffer {
			return errMalformedChunk // a suspiciously long trailer
		}
	}
	budget := maxHeaderBytes
	var trailers head
	if err := fc.readHeaders(&budget, &trailers); err != nil {
		if err == io.ErrUnexpectedEOF {
			return errTrailerEOF
		}
		return err
	}
	return nil
}

// unexpectedEOF turns the end of the stream inside a response into the error
// that says so.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseContentLength parses a Content-Length as strconv.ParseUint(v, 10, 63)
// does.
func parseContentLength(b []byte) (n int64, bad bool) {
	if len(b) == 0 {
		return 0, true
	}
	for _, c := range b {
		if !isDigit(c) || n > (1<<63-1-int64(c-'0'))/10 {
			return 0, true
		}
		n = n*10 + int64(c-'0')
	}
	return n, false
}

// parseHex parses a chunk size: one to sixteen hex digits.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n uint64
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
		n = n<<4 | uint64(c)
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

// trimOWS trims what net/textproto trims around a line or value: spaces
// and tabs.
func trimOWS(b []byte) []byte {
	return bytes.Trim(b, " \t")
}
