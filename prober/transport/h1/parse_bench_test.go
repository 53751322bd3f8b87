package h1

import (
	"bufio"
	"testing"
)

// nginxResponse is what the bench's nginx answers: six header lines and a
// two-byte body.
const nginxResponse = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 30 Nov 2026 01:51:41 GMT\r\n" +
	"Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"

// repeatReader hands out the same response forever, one per Read, as a
// kept-alive connection does.
type repeatReader struct{ b []byte }

func (r *repeatReader) Read(p []byte) (int, error) { return copy(p, r.b), nil }

// BenchmarkReadResponse is the lean client's parsing of one response that
// is already in its read buffer: the user-space part of reading a response,
// without the read syscall.
func BenchmarkReadResponse(b *testing.B) {
	c := &Client{keepAlive: true}
	fc := &conn{c: c, br: bufio.NewReaderSize(&repeatReader{[]byte(nginxResponse)}, readBufferSize)}
	b.ReportAllocs()
	for b.Loop() {
		code, keep, _, err := fc.readResponse()
		if err != nil || code != 200 || !keep {
			b.Fatalf("code %d keep %v err %v", code, keep, err)
		}
	}
}
