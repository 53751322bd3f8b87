package h1

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"reflect"
	"testing"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// FuzzReadResponse holds the lean client's response reader to
// net/http.ReadResponse, read as net/http's Transport reads it: the same
// bytes give the same status code, consume the same bytes (the same framing,
// hence the same body), leave the connection reusable alike, and fail with
// the same outcome; what a flow's capture keeps of them is net/http's
// Response.Header and body. Its seed corpus is
// testdata/fuzz/FuzzReadResponse.
func FuzzReadResponse(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\n\r\nto the close",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: ws\r\nConnection: upgrade\r\n\r\nframes",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n1\r\na\r\n0\r\n\r\n",
		"HTTP/1.1 200\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\nContent-Length: 1\n\nx",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HELLO\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Le",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 16<<10 {
			// Past net/http's read buffer, see stdRead; smaller inputs
			// explore the grammar as well.
			return
		}
		want := stdRead(b)
		got := fastRead(b)
		if !got.equal(want) {
			t.Errorf("%q:\n fast reader %+v\n net/http    %+v", b, got, want)
		}
	})
}

// readResult is what a reader made of a response.
type readResult struct {
	code     int
	consumed int // bytes of the stream the response took
	keep     bool
	header   http.Header
	body     string
	outcome  result.Outcome // of a failure: Success when none
	err      string         // not compared: for the report
}

func (r readResult) equal(o readResult) bool {
	if r.outcome != result.Success || o.outcome != result.Success {
		return r.outcome == o.outcome
	}
	return r.code == o.code && r.consumed == o.consumed && r.keep == o.keep &&
		reflect.DeepEqual(r.header, o.header) && r.body == o.body
}

// countingReader counts the bytes read from it, for a reader's consumption.
// It stands for the connection: the lean reader reads large bodies from it
// directly.
type countingReader struct {
	net.Conn // nil: only Read is called
	r        io.Reader
	n        int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func fastRead(b []byte) readResult {
	src := &countingReader{r: bytes.NewReader(b)}
	fc := &conn{c: &Client{keepAlive: true}, nc: src, br: bufio.NewReaderSize(src, readBufferSize), keep: &kept{}}
	code, keep, _, err := fc.readResponse()
	var header http.Header
	if err == nil {
		header, err = fc.keep.header()
	}
	if err != nil {
		return readResult{outcome: wire.Classify(err), err: err.Error()}
	}
	return readResult{code: code, consumed: src.n - fc.br.Buffered(), keep: keep, header: header, body: string(fc.keep.body)}
}

// stdRead reads as net/http's Transport does: interim 1xx responses are
// skipped, a protocol switch hands over the connection as the body, and the
// body is read to its end. Its buffer holds any input the fuzz test reads:
// net/http reads a line cut by the end of the stream exactly at a multiple
// of its buffer's size as a cut stream, any other as a line, and the lean
// reader does not copy that quirk.
func stdRead(b []byte) readResult {
	src := &countingReader{r: bytes.NewReader(b)}
	br := bufio.NewReaderSize(src, 64<<10)
	fail := func(err error) readResult {
		return readResult{outcome: wire.Classify(err), err: err.Error()}
	}
	var resp *http.Response
	for {
		var err error
		if resp, err = http.ReadResponse(br, &http.Request{Method: "GET"}); err != nil {
			return fail(err)
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == 101 {
			break
		}
	}
	body := resp.Body
	if resp.StatusCode == 101 && resp.Header.Get("Upgrade") != "" && connectionHas(resp.Header, "upgrade") {
		body = io.NopCloser(br)
	}
	read, err := io.ReadAll(body)
	if err != nil {
		return fail(err)
	}
	keep := !resp.Close && resp.StatusCode > 199
	return readResult{code: resp.StatusCode, consumed: src.n - br.Buffered(), keep: keep, header: resp.Header, body: string(read)}
}

func connectionHas(h http.Header, token string) bool {
	for _, v := range h.Values("Connection") {
		for _, t := range bytes.Split([]byte(v), []byte(",")) {
			if equalFoldLower(trimOWS(t), token) {
				return true
			}
		}
	}
	return false
}

// checkValue reads a header value eight bytes at a time: every byte below
// a space but the tab, and DEL, is still refused wherever it stands, among
// bytes of every other kind, and every other byte is accepted.
func TestCheckValueEveryByteEveryPlace(t *testing.T) {
	for _, fill := range []byte{'a', ' ', 0x80, 0xff} {
		for c := range 256 {
			for at := range 19 {
				v := bytes.Repeat([]byte{fill}, 19)
				v[at] = byte(c)
				bad := c < ' ' && c != '\t' || c == 0x7f
				if err := checkValue(v); (err != nil) != bad {
					t.Fatalf("byte %#x at %d among %#x: error %v, want refused %v", c, at, fill, err, bad)
				}
			}
		}
	}
}
