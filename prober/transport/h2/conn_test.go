package h2

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

var testOptions = Options{MaxBody: 1 << 20, MaxHeaderList: 1 << 20, WriteTimeout: time.Second}

// newH2Server is an https server that speaks HTTP/2 (net/http's).
func newH2Server(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// newH2CServer starts a server of HTTP/2 without TLS (prior knowledge).
func newH2CServer(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// dialH2C opens an HTTP/2 connection to s over plain TCP.
func dialH2C(t testing.TB, s *httptest.Server) *Conn {
	t.Helper()
	return dialPlain(t, s.Listener.Addr().String())
}

// dialPlain opens an HTTP/2 connection to addr over plain TCP.
func dialPlain(t testing.TB, addr string) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, nc)
}

// start runs the client side of HTTP/2 over nc, until the test ends.
func start(t testing.TB, nc net.Conn) *Conn {
	t.Helper()
	c, err := New(nc, testOptions, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// dialH2 opens an HTTP/2 connection to s.
func dialH2(t testing.TB, s *httptest.Server) *Conn {
	t.Helper()
	cfg := s.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"h2"}
	tc, err := tls.Dial("tcp", s.Listener.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN chose %q", p)
	}
	return start(t, tc)
}

func request(method, authority, path string, body []byte) *Request {
	var b []byte
	b = AppendField(b, ":method", []byte(method))
	b = AppendField(b, ":scheme", []byte("https"))
	b = AppendField(b, ":authority", []byte(authority))
	b = AppendField(b, ":path", []byte(path))
	b = AppendField(b, "user-agent", []byte("h2-test"))
	return &Request{Header: b, Body: body, Head: method == "HEAD"}
}

func TestRoundTrip(t *testing.T) {
	s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("X-Method", r.Method)
			w.Write(body)
		case "/trailers":
			w.Header().Set("Trailer", "X-T")
			w.Write([]byte("abc"))
			w.Header().Set("X-T", "1")
		case "/big":
			w.Write([]byte(strings.Repeat("x", 3<<20)))
		case "/missing":
			w.WriteHeader(404)
		case "/grpc":
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Trailer", "Grpc-Status")
			w.Write([]byte("abc"))
			w.Header().Set("Grpc-Status", "14")
		case "/grpc-trailers-only":
			w.Header().Set("Content-Type", "application/grpc+proto")
			w.Header().Set("Grpc-Status", "8")
			w.WriteHeader(200)
		case "/grpc-no-trailers":
			w.Header().Set("Content-Type", "application/grpc-web")
			w.Write([]byte("abc"))
		}
	})
	c := dialH2(t, s)
	host := s.Listener.Addr().String()
	post := strings.Repeat("p", 200<<10) // past the server's initial windows
	kept := request("POST", host, "/echo", []byte("hello"))
	kept.Keep = make([]byte, 0, 2)
	for _, tc := range []struct {
		req  *Request
		want Response
	}{
		{request("GET", host, "/echo", nil), Response{Status: 200, GRPC: GRPC{EndedByFields: true}}},
		{request("POST", host, "/echo", []byte(post)), Response{Status: 200, BodyLen: int64(len(post))}},
		{kept, Response{Status: 200, BodyLen: 5, Body: []byte("he")}},
		{request("GET", host, "/trailers", nil), Response{Status: 200, BodyLen: 3, Trailers: true, GRPC: GRPC{EndedByFields: true}}},
		{request("GET", host, "/big", nil), Response{Status: 200, BodyLen: 1 << 20, Truncated: true}},
		{request("GET", host, "/missing", nil), Response{Status: 404, GRPC: GRPC{EndedByFields: true}}},
		{request("HEAD", host, "/echo", nil), Response{Status: 200, GRPC: GRPC{EndedByFields: true}}},
		{request("POST", host, "/grpc", nil), Response{Status: 200, BodyLen: 3, Trailers: true,
			GRPC: GRPC{ContentType: true, EndedByFields: true, HasStatus: true, Status: 14}}},
		{request("POST", host, "/grpc-trailers-only", nil), Response{Status: 200,
			GRPC: GRPC{ContentType: true, EndedByFields: true, HasStatus: true, Status: 8}}},
		{request("POST", host, "/grpc-no-trailers", nil), Response{Status: 200, BodyLen: 3}},
	} {
		got, err := c.RoundTrip(tc.req, time.Now().Add(5*time.Second))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RoundTrip() = %+v, %v; want %+v", got, err, tc.want)
		}
	}
	if !c.Usable() {
		t.Error("the connection is not usable after its round trips")
	}
}

// TestMultiplexed runs 20 callers' requests on one connection at once,
// over TLS and over plain TCP, where the reader writes out the requests
// of the callers it wakes (read.go).
func TestMultiplexed(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(map[bool]string{false: "tls", true: "plain"}[plain], func(t *testing.T) {
			var mu sync.Mutex
			conns := map[string]int{}
			h := func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				conns[r.RemoteAddr]++
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				w.Write([]byte("ok"))
			}
			s, dial := newH2Server(t, h), dialH2
			if plain {
				s, dial = newH2CServer(t, h), dialH2C
			}
			c := dial(t, s)
			req := request("GET", s.Listener.Addr().String(), "/", nil)
			var wg sync.WaitGroup
			start := time.Now()
			for range 20 {
				wg.Go(func() {
					for range 5 {
						if resp, err := c.RoundTrip(req, time.Now().Add(5*time.Second)); err != nil || resp.Status != 200 {
							t.Errorf("RoundTrip() = %+v, %v", resp, err)
						}
					}
				})
			}
			wg.Wait()
			if len(conns) != 1 {
				t.Errorf("the requests came on %d connections, want 1", len(conns))
			}
			// 100 requests of 10 ms, 20 at a time: about 50 ms, not the 1 s in turn.
			if elapsed := time.Since(start); elapsed > 900*time.Millisecond {
				t.Errorf("100 requests took %v: the streams did not run at once", elapsed)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	release := make(chan struct{})
	s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		w.Write([]byte("ok"))
	})
	defer close(release)
	c := dialH2(t, s)
	host := s.Listener.Addr().String()
	start := time.Now()
	_, err := c.RoundTrip(request("GET", host, "/slow", nil), start.Add(100*time.Millisecond))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("RoundTrip() error %v, want a deadline", err)
	}
	if elapsed := time.Since(start); elapsed < 100*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("the deadline ended the request after %v", elapsed)
	}
	// The stream was reset; the connection carries on.
	if resp, err := c.RoundTrip(request("GET", host, "/", nil), time.Now().Add(5*time.Second)); err != nil || resp.Status != 200 {
		t.Errorf("after the timeout: %+v, %v", resp, err)
	}
}

// TestRoundTripZeroAllocs holds the hot path to no allocation per request,
// as the HTTP/1.1 client's (TestClientFastZeroAllocs), against a server
// that allocates nothing either (cannedServer): nginx's response, with a
// dynamic table entry the server adds on every response as nginx does; and
// a gRPC call, its message in a DATA frame, answered with its status in
// trailers, as grpc-go's server answers it.
func TestRoundTripZeroAllocs(t *testing.T) {
	grpc := request("POST", "127.0.0.1", "/loadprobe.demo.v1.Target/Noop", []byte{0, 0, 0, 0, 0})
	for _, tc := range []struct {
		name   string
		answer []byte
		req    *Request
		want   Response
	}{
		{"nginx", cannedResponse, request("GET", "127.0.0.1", "/", nil), Response{Status: 200, BodyLen: 2}},
		{"gRPC", cannedGRPCResponse, grpc, Response{Status: 200, BodyLen: 5, Trailers: true,
			GRPC: GRPC{ContentType: true, EndedByFields: true, HasStatus: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialCanned(t, tc.answer)
			for range 50 { // the buffers, the table and the free streams grow first
				c.RoundTrip(tc.req, time.Now().Add(5*time.Second))
			}
			var resp Response
			var err error
			allocs := testing.AllocsPerRun(500, func() {
				resp, err = c.RoundTrip(tc.req, time.Now().Add(5*time.Second))
			})
			if err != nil || !reflect.DeepEqual(resp, tc.want) {
				t.Fatalf("RoundTrip() = %+v, %v; want %+v", resp, err, tc.want)
			}
			if allocs != 0 {
				t.Errorf("RoundTrip allocates %v times per request, want 0", allocs)
			}
		})
	}
}

// cannedResponse is nginx's answer to GET / of bench/nginx.conf.in over h2,
// as its HPACK encoder writes it: the status indexed, server, date,
// content-type and content-length as literals added to the table, then
// the body in a DATA frame that ends the stream.
var cannedResponse = func() []byte {
	var b []byte
	b = appendFrame(b, 0x1, flagEndHeaders, incrementalBlock(0x88, [][2]string{
		{"server", "nginx/1.26.3"}, {"date", "Tue, 01 Dec 2026 23:40:00 GMT"},
		{"content-type", "text/plain"}, {"content-length", "2"},
	}))
	return appendFrame(b, 0x0, flagEndStream, []byte("ok"))
}()

// cannedGRPCResponse is a grpc-go server's answer to a unary call: the
// status and the content type, the reply (an empty message) in a DATA
// frame, then trailers that end the stream with grpc-status 0.
var cannedGRPCResponse = func() []byte {
	var b []byte
	b = appendFrame(b, 0x1, flagEndHeaders, incrementalBlock(0x88, [][2]string{{"content-type", "application/grpc"}}))
	b = appendFrame(b, 0x0, 0, []byte{0, 0, 0, 0, 0})
	return appendFrame(b, 0x1, flagEndHeaders|flagEndStream, incrementalBlock(0x40, [][2]string{
		{"grpc-status", "0"}, {"grpc-message", ""},
	}))
}()

// incrementalBlock is a header block of first (an indexed field, or the
// first byte of a literal with a new name when 0x40), then fields as
// literals the decoder adds to its table, names by their static index
// when they have one.
func incrementalBlock(first byte, fields [][2]string) []byte {
	block := []byte{first}
	if first == 0x40 {
		block = block[:0]
	}
	for _, f := range fields {
		if i, ok := staticNames[f[0]]; ok {
			block = appendInt(block, 6, 0x40, i)
		} else {
			block = append(block, 0x40)
			block = appendInt(block, 7, 0, uint64(len(f[0])))
			block = append(block, f[0]...)
		}
		block = appendInt(block, 7, 0, uint64(len(f[1])))
		block = append(block, f[1]...)
	}
	return block
}

func appendFrame(b []byte, typ, flags byte, p []byte) []byte {
	b = append(b, byte(len(p)>>16), byte(len(p)>>8), byte(len(p)), typ, flags, 0, 0, 0, 0)
	return append(b, p...)
}

// dialCanned connects to a plain-text server that answers every request
// with answer (its frames', on the request's stream) once the request's
// stream has ended, reading and writing in place: it allocates nothing per
// request.
func dialCanned(t testing.TB, answer []byte) *Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		sc, err := ln.Accept()
		if err != nil {
			return
		}
		defer sc.Close()
		serveCanned(sc, func(out []byte, id [4]byte) []byte { return appendAnswer(out, answer, id) })
	}()
	return dialPlain(t, ln.Addr().String())
}

// serveCanned serves one plain-text connection until the client closes it:
// it acknowledges the client's SETTINGS and, once a request's stream has
// ended, appends the frames answer writes for the stream id, reading and
// writing in place.
func serveCanned(sc net.Conn, answer func(out []byte, id [4]byte) []byte) {
	br := bufio.NewReaderSize(sc, 64<<10)
	if _, err := br.Discard(len(http2.ClientPreface)); err != nil {
		return
	}
	sc.Write(appendFrame(nil, 0x4, 0, nil)) // the server's SETTINGS
	out := make([]byte, 0, 4<<10)
	for {
		h, err := br.Peek(9)
		if err != nil {
			return
		}
		length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags, id := h[3], h[4], [4]byte(h[5:9])
		if _, err := br.Discard(9 + length); err != nil {
			return
		}
		switch {
		case typ == 0x4 && flags&flagAck == 0:
			out = appendFrame(out, 0x4, flagAck, nil)
		case (typ == 0x0 || typ == 0x1) && flags&flagEndStream != 0:
			out = answer(out, id)
		}
		if len(out) > 0 && br.Buffered() == 0 || len(out) > 2<<10 {
			if _, err := sc.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
	}
}

// appendAnswer appends answer's frames to out on stream id.
func appendAnswer(out, answer []byte, id [4]byte) []byte {
	at := len(out)
	out = append(out, answer...)
	for f := out[at:]; len(f) > 0; f = f[9+(int(f[0])<<16|int(f[1])<<8|int(f[2])):] {
		copy(f[5:9], id[:])
	}
	return out
}

// BenchmarkRoundTrip is a request on one stream of one connection to the
// canned server, the client's cost with the least of a server's beside it.
func BenchmarkRoundTrip(b *testing.B) {
	c := dialCanned(b, cannedResponse)
	req := request("GET", "127.0.0.1", "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.RoundTrip(req, time.Now().Add(5*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}

// goAwayServer answers the first request of each connection, then sends
// GOAWAY (NO_ERROR) and keeps the connection open, reading until the
// client closes it. open counts the connections the client has not closed.
func goAwayServer(t *testing.T, open *atomic.Int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			sc, err := ln.Accept()
			if err != nil {
				return
			}
			open.Add(1)
			go func() {
				defer open.Add(-1)
				defer sc.Close()
				serveCanned(sc, func(out []byte, id [4]byte) []byte {
					out = appendAnswer(out, cannedResponse, id)
					return appendFrame(out, 0x7, 0, append(id[:], 0, 0, 0, 0)) // GOAWAY: last stream id, NO_ERROR
				})
			}()
		}
	}()
	return ln.Addr().String()
}

// A connection the server sent GOAWAY on closes once its last stream ends,
// though the server keeps it open: 200 requests, each on a connection the
// server then sends away, leave at most the last one open (each had stayed
// open: 12 299 descriptors in one 8 s step).
func TestGoAwayClosesTheConnection(t *testing.T) {
	var open atomic.Int64
	addr := goAwayServer(t, &open)
	g := NewPool(1, 1).Join()
	defer g.Leave()
	dial := func() (*Conn, error) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		return New(nc, testOptions, time.Now().Add(time.Second))
	}
	for i := range 200 {
		for try := 0; ; try++ {
			c, err := g.Get(dial)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.RoundTrip(request("GET", addr, "/", nil), time.Now().Add(time.Second))
			if errors.Is(err, ErrUnprocessed) && try == 0 {
				continue // sent as the GOAWAY came: once more, as the clients do
			}
			if err != nil || resp.Status != 200 {
				t.Fatalf("request %d: %v %v", i, resp.Status, err)
			}
			break
		}
	}
	testkit.WaitFor(t, "the connections sent away to close", func() bool { return open.Load() <= 1 })
}

// A header block a server grows with CONTINUATION frames toward the
// header list's bound is not held for the connection's life: once it is
// read, the reader keeps at most keptBuffer of each buffer it grew.
func TestLargeHeaderBlockIsNotKept(t *testing.T) {
	block := incrementalBlock(0x88, [][2]string{{"x-big", strings.Repeat("a", 900<<10)}})
	var answer []byte
	for first := true; len(block) > 0; first = false {
		chunk := block[:min(len(block), 16<<10)]
		block = block[len(chunk):]
		typ, flags := byte(0x9), byte(0)
		if first {
			typ, flags = 0x1, flagEndStream
		}
		if len(block) == 0 {
			flags |= flagEndHeaders
		}
		answer = appendFrame(answer, typ, flags, chunk)
	}
	c := dialCanned(t, answer)
	resp, err := c.RoundTrip(request("GET", "example", "/", nil), time.Now().Add(time.Second))
	if err != nil || resp.Status != 200 {
		t.Fatalf("%v %v", resp.Status, err)
	}
	c.Close() // the reader has stopped: its buffers are as it left them
	r := &c.reader
	if cap(r.block) > keptBuffer || r.dec.name.Cap() > keptBuffer || r.dec.val.Cap() > keptBuffer || cap(r.dec.scratch) > keptBuffer {
		t.Errorf("after a 900 KiB block the reader keeps %d, %d, %d and %d bytes of buffers, want at most %d each",
			cap(r.block), r.dec.name.Cap(), r.dec.val.Cap(), cap(r.dec.scratch), keptBuffer)
	}
}
