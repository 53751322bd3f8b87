package prober

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"github.com/loadprobe/loadprobe/prober/result"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loadprobe/loadprobe/config"
)

// The lean HTTP/1.1 client. The request is serialized once; an attempt is one
// SetDeadline, one Write and the parsing of the response in place in the
// connection's read buffer, with no allocation once the connection is up.
// Whatever goes wrong, the connection is closed (a half-read response makes
// it unusable) and the next attempt dials a new one.

const (
	readBufferSize = 8 << 10
	// maxHeaderBytes bounds the status line and headers of one response, as
	// net/http's default MaxResponseHeaderBytes does.
	maxHeaderBytes = 1 << 20
)

// Protocol errors of the lean client: the peer answered, but not in HTTP/1.1.
// They classify as Other.
var (
	errMalformedStatus = errors.New("malformed HTTP status line")
	errMalformedHeader = errors.New("malformed HTTP response header")
	errMalformedLength = errors.New("malformed Content-Length")
	errMalformedChunk  = errors.New("malformed chunked encoding")
	errHeaderTooLarge  = errors.New("response headers too large")
)

// scratch holds the buffers into which large bodies are read and dropped;
// a Conn takes one only while it reads past its read buffer.
var scratch = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

type fastClient struct {
	addr      string // host:port to dial
	request   []byte // the whole request, body included
	head      bool   // HEAD: no response has a body
	keepAlive bool
	// replayable requests are sent again, once, on a fresh connection when
	// a reused one turns out to have been closed by the server before it
	// read the request (a keep-alive race, not a failure of the target),
	// under the rules of net/http.
	replayable bool
	valid      *codeTable
	conns      connSet[net.Conn]
	aborted    context.Context // ends on Client.Abort: every dial gives up
	abort      context.CancelFunc
}

func newFastClient(req config.Request, u *url.URL) (*fastClient, error) {
	auth, err := staticAuthorization(req.HTTPClientConfig)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	host := strings.TrimSuffix(u.Host, ":") // "example.com:" means the default port

	// Headers in a stable order, canonical names as net/http sends them.
	names := make([]string, 0, len(req.Headers))
	values := make(map[string]string, len(req.Headers))
	for k, v := range req.Headers {
		k = textproto.CanonicalMIMEHeaderKey(k)
		names = append(names, k)
		values[k] = v
	}
	slices.Sort(names)

	var b []byte
	b = append(b, req.Method...)
	b = append(b, ' ')
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\n"...)
	if h, ok := values["Host"]; ok {
		host = h
	}
	b = appendHeader(b, "Host", host)
	if _, ok := values["User-Agent"]; !ok {
		b = appendHeader(b, "User-Agent", userAgent())
	}
	if _, ok := values["Authorization"]; !ok && auth != "" {
		b = appendHeader(b, "Authorization", auth)
	}
	for _, k := range names {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			// Framing is the client's, as in net/http.
			continue
		case "Connection":
			if !req.KeepAlive {
				continue
			}
		}
		b = appendHeader(b, k, values[k])
	}
	payload := req.Payload
	switch req.Method {
	case "POST", "PUT", "PATCH":
		b = appendHeader(b, "Content-Length", strconv.Itoa(len(payload)))
	default:
		if len(payload) > 0 {
			b = appendHeader(b, "Content-Length", strconv.Itoa(len(payload)))
		}
	}
	if !req.KeepAlive {
		b = appendHeader(b, "Connection", "close")
	}
	b = append(b, "\r\n"...)
	b = append(b, payload...)

	replayable := false
	switch req.Method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		replayable = true
	}
	if _, ok := values["Idempotency-Key"]; ok {
		replayable = true
	}
	if _, ok := values["X-Idempotency-Key"]; ok {
		replayable = true
	}

	aborted, abort := context.WithCancel(context.Background())
	return &fastClient{
		aborted: aborted, abort: abort,
		addr:       net.JoinHostPort(u.Hostname(), port),
		request:    b,
		head:       req.Method == "HEAD",
		keepAlive:  req.KeepAlive,
		replayable: replayable,
		valid:      newCodeTable(req),
	}, nil
}

func appendHeader(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

func (c *fastClient) newConn() Conn {
	return &fastConn{c: c, br: bufio.NewReaderSize(nil, readBufferSize)}
}

func (c *fastClient) close() {
	for _, nc := range c.conns.drain() {
		nc.Close()
	}
}

type fastConn struct {
	c      *fastClient
	nc     net.Conn // nil until dialled, and after any failure
	br     *bufio.Reader
	reused bool // nc has carried a complete response
}

func (fc *fastConn) Do(deadline time.Time) (int, result.Outcome) {
	code, stale, err := fc.roundTrip(deadline)
	if stale && fc.c.replayable {
		code, _, err = fc.roundTrip(deadline)
	}
	if err != nil {
		return 0, classify(err)
	}
	return code, fc.c.valid.outcome(code)
}

func (fc *fastConn) Close() {
	if fc.nc != nil {
		fc.closeConn()
	}
}

// roundTrip sends the request and reads the response. stale reports a
// failure of a reused connection before any byte of a response arrived:
// the server had closed it while it was idle.
func (fc *fastConn) roundTrip(deadline time.Time) (code int, stale bool, err error) {
	if fc.nc != nil {
		if err := fc.nc.SetDeadline(deadline); err != nil {
			fc.closeConn() // closed by Client.Close: dial again
		}
	}
	if fc.nc == nil {
		if err := fc.dial(deadline); err != nil {
			return 0, false, err
		}
	}
	reused := fc.reused
	if _, err := fc.nc.Write(fc.c.request); err != nil {
		fc.closeConn()
		return 0, reused && isStale(err), err
	}
	// Let the other workers run before reading: by the time this one is
	// scheduled again its response has usually arrived, and the read gets
	// it at once. Reading straight away finds the socket empty when the
	// generator is busy: a wasted read syscall (EAGAIN), then parking on
	// the network poller and being woken from it. With one core and 50
	// connections against nginx that is 8% of the CPU per request and 15%
	// of the throughput (bench/BENCH.md); when nothing else is runnable,
	// Gosched returns at once and costs nothing worth counting.
	runtime.Gosched()
	code, keep, started, err := fc.readResponse()
	if err != nil {
		fc.closeConn()
		return 0, reused && !started && isStale(err), err
	}
	if keep && fc.c.keepAlive {
		fc.reused = true
	} else {
		fc.closeConn()
	}
	return code, false, nil
}

func (fc *fastConn) dial(deadline time.Time) error {
	nc, err := dial(fc.c.aborted, fc.c.addr, deadline)
	if err != nil {
		return err
	}
	if err := nc.SetDeadline(deadline); err != nil {
		nc.Close()
		return err
	}
	fc.c.conns.add(nc)
	fc.nc = nc
	fc.br.Reset(nc)
	fc.reused = false
	return nil
}

func (fc *fastConn) closeConn() {
	fc.c.conns.remove(fc.nc)
	fc.nc.Close()
	fc.nc = nil
	fc.reused = false
}

// isStale reports the errors of a connection the peer had closed.
func isStale(err error) bool {
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// readResponse reads one final response, skipping interim 1xx ones, and
// discards its body. keep reports whether the connection can carry another
// request; started whether any byte of a response arrived.
func (fc *fastConn) readResponse() (code int, keep, started bool, err error) {
	for {
		budget := maxHeaderBytes
		line, truncated, err := fc.readLine(&budget)
		if err != nil {
			if len(line) == 0 && !started {
				return 0, false, false, err
			}
			return 0, false, true, unexpectedEOF(err)
		}
		started = true
		code, http10, ok := parseStatusLine(line)
		if !ok {
			return 0, false, true, errMalformedStatus
		}
		if truncated {
			if err := fc.skipLine(&budget); err != nil {
				return 0, false, true, err
			}
		}

		// Headers: only the three that frame the body matter.
		contentLength := int64(-1)
		chunked, otherCoding := false, false
		connClose, connKeepAlive := false, false
		for {
			line, truncated, err := fc.readLine(&budget)
			if err != nil {
				return 0, false, true, unexpectedEOF(err)
			}
			if len(line) == 0 {
				break
			}
			if line[0] == ' ' || line[0] == '\t' {
				// An obsolete folded continuation line: ignore it.
				if truncated {
					if err := fc.skipLine(&budget); err != nil {
						return 0, false, true, err
					}
				}
				continue
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return 0, false, true, errMalformedHeader
			}
			name, value := line[:colon], trimSpace(line[colon+1:])
			switch {
			case truncated:
				// Values this long are no framing header's; skip them.
				if equalFoldLower(name, "content-length") || equalFoldLower(name, "transfer-encoding") {
					return 0, false, true, errMalformedHeader
				}
				if err := fc.skipLine(&budget); err != nil {
					return 0, false, true, err
				}
			case equalFoldLower(name, "content-length"):
				n, ok := parseContentLength(value)
				if !ok || contentLength >= 0 && n != contentLength {
					return 0, false, true, errMalformedLength
				}
				contentLength = n
			case equalFoldLower(name, "transfer-encoding"):
				// Only a final chunked coding frames the body; any other
				// coding leaves it delimited by the connection's close.
				last := value
				if i := bytes.LastIndexByte(value, ','); i >= 0 {
					last = trimSpace(value[i+1:])
				}
				if equalFoldLower(last, "chunked") {
					chunked = true
				} else if len(value) > 0 {
					otherCoding = true
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
					if equalFoldLower(tok, "close") {
						connClose = true
					} else if equalFoldLower(tok, "keep-alive") {
						connKeepAlive = true
					}
				}
			}
		}

		if code >= 100 && code < 200 && code != 101 {
			continue // an interim response; the final one follows
		}
		keep = !connClose && (!http10 || connKeepAlive)
		if code == 101 {
			// The connection switched to another protocol; the exchange
			// is over and the connection is no longer HTTP/1.1.
			return code, false, true, nil
		}
		if fc.c.head || code == 204 || code == 304 {
			return code, keep, true, nil
		}
		var whole bool
		switch {
		case chunked && !otherCoding:
			whole, err = fc.discardChunked()
		case chunked || otherCoding || contentLength < 0:
			// Delimited by the close of the connection.
			whole, err = fc.discardToEOF()
			keep = false
		default:
			whole, err = fc.discardN(contentLength)
		}
		if err != nil {
			return 0, false, true, err
		}
		return code, keep && whole, true, nil
	}
}

// readLine reads one line without its line ending. A line longer than the
// read buffer comes back truncated to what the buffer holds; the caller
// looks at that part and then calls skipLine. The budget counts header bytes.
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
			return line, false, io.ErrUnexpectedEOF
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
