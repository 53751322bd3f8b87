package transport

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// A flow's capturing step reads on the lean client what it read through
// net/http: for the same bytes, the same headers (folded, repeated, long,
// an interim response's left out, the trailers too), the same body (framed
// by length, by chunks or by the close, cut at the body limit) and the same
// outcome, twice on one connection where the response lets it be reused.
func TestCaptureReadsWhatNetHTTPReads(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	overLimit := strings.Repeat("y", wire.MaxBodyBytes+100)
	for _, tc := range []struct{ name, resp string }{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 16\r\nX-Token: abc\r\n\r\n{\"token\": \"abc\"}"},
		{"chunked with trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\nX-Token: abc\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n"},
		{"chunked large", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000\r\n" + big + "\r\n0\r\n\r\n"},
		{"large", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(big), big)},
		{"until close", "HTTP/1.1 200 OK\r\nX-Token: abc\r\n\r\n" + big},
		{"interim", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\nX-Token: early\r\n\r\nHTTP/1.1 200 OK\r\nX-Token: final\r\nContent-Length: 2\r\n\r\nok"},
		{"header forms", "HTTP/1.1 200 OK\r\nx-token:   abc  \r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Folded: one\r\n two\r\nX-Long: " + strings.Repeat("a", 20<<10) + "\r\nContent-Length: 0\r\n\r\n"},
		{"over the body limit", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(overLimit), overLimit)},
		{"not found", "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type read struct {
				code   result.Code
				o      result.Outcome
				header http.Header
				body   []byte
			}
			got := map[string][]read{}
			for _, path := range paths {
				serve := answer(tc.resp, false)
				if tc.name == "until close" {
					serve = answerUntilClose(tc.resp)
				}
				s := testkit.NewServer(t, serve)
				conn := newTestClient(t, testRequest(s.URL), path).NewConn(template.NewVars(0))
				for range 2 {
					var r read
					r.code, r.o = conn.(Capturer).DoCapture(time.Now().Add(5*time.Second), nil, func(o result.Outcome, _ int, h http.Header, body []byte) result.Outcome {
						r.header, r.body = h.Clone(), append([]byte(nil), body...)
						return o
					})
					got[path] = append(got[path], r)
				}
				conn.Close()
			}
			for i := range got["std"] {
				lean, std := got["fast"][i], got["std"][i]
				if lean.code != std.code || lean.o != std.o {
					t.Errorf("attempt %d: lean %s %v, net/http %s %v", i, lean.code.String(), lean.o, std.code.String(), std.o)
				}
				if !reflect.DeepEqual(lean.header, std.header) {
					t.Errorf("attempt %d: headers differ:\nlean     %q\nnet/http %q", i, lean.header, std.header)
				}
				if string(lean.body) != string(std.body) {
					t.Errorf("attempt %d: the lean client read %d bytes of body, net/http %d", i, len(lean.body), len(std.body))
				}
			}
			if r := got["fast"][0]; r.o == result.Success && r.header == nil {
				t.Error("a success's capture saw no headers")
			}
		})
	}
}
