package transport

import (
	"bufio"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"golang.org/x/net/http2"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/result"
)

// h2Request is a probe's request to an https URL with the defaults, so
// HTTP/2 by ALPN, and the test server's self-signed certificate accepted.
func h2Request(url string, timeout time.Duration) config.Request {
	req := testRequest(url)
	req.Timeout = model.Duration(timeout)
	req.HTTPClientConfig.TLSConfig.InsecureSkipVerify = true
	return req
}

// TestClientH2Differential sends the same requests to one HTTP/2 server
// through the lean HTTP/2 client and through net/http's (the std path):
// the same status codes and outcomes, and the lean one speaks HTTP/2.
func TestClientH2Differential(t *testing.T) {
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Header.Get("X-Path"), r.Proto)
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/echo":
			w.Write(body)
		case "/status":
			w.WriteHeader(map[string]int{"404": 404, "204": 204, "500": 500, "302": 302}[r.URL.RawQuery])
		case "/big":
			w.Write([]byte(strings.Repeat("x", 3<<20)))
		case "/huge": // past maxBodyBytes: counted by its status, not read on
			chunk := []byte(strings.Repeat("x", 1<<20))
			for range 12 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/trailers":
			w.Header().Set("Trailer", "X-T")
			w.Write([]byte("abc"))
			w.Header().Set("X-T", "1")
		case "/early":
			w.Header().Set("Link", "</a.css>")
			w.WriteHeader(103)
			w.Write([]byte("ok"))
		case "/abort":
			panic(http.ErrAbortHandler) // a RST_STREAM
		case "/slow":
			time.Sleep(time.Second)
		}
	}))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	for _, tc := range []struct {
		path, method, body string
		code               int
		want               result.Outcome
	}{
		{path: "/echo", code: 200, want: result.Success},
		{path: "/echo", method: "POST", body: strings.Repeat("p", 300<<10), code: 200, want: result.Success},
		{path: "/echo", method: "HEAD", code: 200, want: result.Success},
		{path: "/status?404", code: 404, want: result.HTTPError},
		{path: "/status?204", code: 204, want: result.Success},
		{path: "/status?500", code: 500, want: result.HTTPError},
		{path: "/status?302", code: 302, want: result.HTTPError},
		{path: "/big", code: 200, want: result.Success},
		{path: "/huge", code: 200, want: result.Success},
		{path: "/trailers", code: 200, want: result.Success},
		{path: "/early", code: 200, want: result.Success},
		{path: "/abort", want: result.Reset},
		{path: "/slow", want: result.Timeout},
	} {
		for _, path := range []string{"fast", "std"} {
			req := h2Request(srv.URL+tc.path, 500*time.Millisecond)
			req.Method = cmpOr(tc.method, "GET")
			req.Body = tc.body
			req.Headers = map[string]string{"X-Path": path + tc.path}
			conn := newTestClient(t, req, path).NewConn(template.NewVars(0))
			code, o := conn.Do(time.Now().Add(time.Duration(req.Timeout)))
			conn.Close()
			if code != httpCode(tc.code) || o != tc.want {
				t.Errorf("%s %s on %s: %d, %v; want %d, %v", req.Method, tc.path, path, code, o, tc.code, tc.want)
			}
		}
	}
	if p, _ := protos.Load("fast/echo"); p != "HTTP/2.0" {
		t.Errorf("the lean client spoke %v, want HTTP/2.0", p)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// h2HostileServers answer over HTTP/2 the way a broken or hostile server
// does; serve runs once the request's HEADERS frame came, with the
// server's Framer.
var h2HostileServers = []struct {
	name    string
	window  bool // the server's SETTINGS open no stream window
	post    bool // the request has a body
	serve   func(fr *http2.Framer, id uint32, c net.Conn)
	want    result.Outcome
	anyFail bool // any failure will do, as long as it ends in time
}{
	{name: "RST_STREAM", serve: func(fr *http2.Framer, id uint32, _ net.Conn) {
		fr.WriteRSTStream(id, http2.ErrCodeInternal)
		hold(fr)
	}, want: result.Reset},
	{name: "headers never sent", serve: func(fr *http2.Framer, _ uint32, _ net.Conn) { hold(fr) }, want: result.Timeout},
	{name: "body never ends", serve: func(fr *http2.Framer, id uint32, _ net.Conn) {
		writeHead(fr, id, false)
		fr.WriteData(id, false, []byte("hello"))
		hold(fr)
	}, want: result.Timeout},
	{name: "window never opens", window: true, post: true, serve: func(fr *http2.Framer, _ uint32, _ net.Conn) { hold(fr) },
		want: result.Timeout},
	{name: "SETTINGS flood", serve: func(fr *http2.Framer, _ uint32, c net.Conn) {
		c.SetWriteDeadline(time.Now().Add(3 * time.Second))
		for fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100}) == nil {
		}
	}, anyFail: true},
	{name: "GOAWAY and close before answering", serve: func(fr *http2.Framer, id uint32, _ net.Conn) {
		fr.WriteGoAway(id, http2.ErrCodeNo, nil)
	}, want: result.Reset},
	{name: "close mid-body", serve: func(fr *http2.Framer, id uint32, _ net.Conn) {
		writeHead(fr, id, false)
		fr.WriteData(id, false, []byte("hel"))
	}, want: result.Reset},
}

// writeHead writes a 200 response's HEADERS frame.
func writeHead(fr *http2.Framer, id uint32, end bool) {
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: []byte{0x88}, EndHeaders: true, EndStream: end})
}

// hold reads the client's frames until it closes, or 5 s.
func hold(fr *http2.Framer) {
	for {
		if _, err := fr.ReadFrame(); err != nil {
			return
		}
	}
}

// newH2HostileServer is an https server that speaks h2 by ALPN: its
// SETTINGS, then serve for each connection's first request. It counts the
// connections.
func newH2HostileServer(t *testing.T, window bool, serve func(*http2.Framer, uint32, net.Conn)) (string, *atomic.Int64) {
	t.Helper()
	cert := httptest.NewTLSServer(http.NotFoundHandler())
	cfg := &tls.Config{Certificates: cert.TLS.Certificates, NextProtos: []string{"h2"}}
	cert.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open { // net/http's client keeps a busy connection open
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				if _, err := br.Discard(len(http2.ClientPreface)); err != nil {
					return
				}
				fr := http2.NewFramer(c, br)
				var settings []http2.Setting
				if window {
					settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
				}
				fr.WriteSettings(settings...)
				for {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					if h, ok := f.(*http2.HeadersFrame); ok {
						serve(fr, h.StreamID, c)
						return
					}
				}
			})
		}
	})
	return "https://" + ln.Addr().String() + "/", &conns
}

// TestHostileH2Servers runs one table of hostile HTTP/2 servers through
// the lean HTTP/2 client and net/http's: each attempt ends by its
// deadline with the outcome the table says, on both paths.
func TestHostileH2Servers(t *testing.T) {
	const timeout, liveness = 300 * time.Millisecond, 4 * time.Second
	for _, tc := range h2HostileServers {
		for _, path := range []string{"fast", "std"} {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				url, _ := newH2HostileServer(t, tc.window, tc.serve)
				req := h2Request(url, timeout)
				if tc.post {
					req.Method, req.Body = "POST", strings.Repeat("b", 100<<10) // past the first 64 KiB of window
				}
				start := time.Now()
				code, o, ok := doWithin(newTestClient(t, req, path).NewConn(template.NewVars(0)), start.Add(timeout), liveness)
				switch {
				case !ok:
					t.Fatalf("the attempt did not end within %v of its %v deadline", liveness, timeout)
				case tc.anyFail && o == result.Success:
					t.Errorf("Do() = %d, %v; want a failure", code, o)
				case !tc.anyFail && (code != (result.Code{}) || o != tc.want):
					t.Errorf("Do() = %v, %v; want 0, %v", code, o, tc.want)
				}
				if o == result.Timeout && time.Since(start) < timeout {
					t.Errorf("timeout after %v, before the %v deadline", time.Since(start), timeout)
				}
			})
		}
	}
}

// TestH2GoAwayMidRamp: a server that answers two requests per connection
// and then says GOAWAY, as nginx does after keepalive_requests, costs no
// request: the next one goes on a new connection, on both paths.
func TestH2GoAwayMidRamp(t *testing.T) {
	for _, path := range []string{"fast", "std"} {
		t.Run(path, func(t *testing.T) {
			url, conns := newH2HostileServer(t, false, func(fr *http2.Framer, id uint32, _ net.Conn) {
				writeHead(fr, id, true)
				for {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					if h, ok := f.(*http2.HeadersFrame); ok {
						// The second request is answered, and the last.
						fr.WriteGoAway(h.StreamID, http2.ErrCodeNo, nil)
						writeHead(fr, h.StreamID, true)
						return
					}
				}
			})
			conn := newTestClient(t, h2Request(url, 2*time.Second), path).NewConn(template.NewVars(0))
			defer conn.Close()
			for i := range 6 {
				if code, o := conn.Do(time.Now().Add(2 * time.Second)); code != result.HTTPStatus(200) || o != result.Success {
					t.Fatalf("request %d: %d, %v", i, code, o)
				}
			}
			if n := conns.Load(); n != 3 {
				t.Errorf("6 requests took %d connections, want 3", n)
			}
		})
	}
}

// TestH2StreamsShareConnection: with http2.streams_per_connection, that
// many Conns share one connection; at the default, each has its own.
func TestH2StreamsShareConnection(t *testing.T) {
	for _, tc := range []struct{ streams, conns, want int }{{1, 4, 4}, {2, 4, 2}, {10, 4, 1}} {
		var mu sync.Mutex
		remotes := map[string]bool{}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			remotes[r.RemoteAddr] = true
			mu.Unlock()
		}))
		srv.EnableHTTP2 = true
		srv.StartTLS()
		req := h2Request(srv.URL, 2*time.Second)
		req.HTTP2.StreamsPerConnection = tc.streams
		c := newTestClient(t, req, "")
		var wg sync.WaitGroup
		for range tc.conns {
			conn := c.NewConn(template.NewVars(0))
			wg.Go(func() {
				defer conn.Close()
				for range 5 {
					if code, o := conn.Do(time.Now().Add(2 * time.Second)); o != result.Success {
						t.Errorf("Do() = %d, %v", code, o)
					}
				}
			})
		}
		wg.Wait()
		srv.Close()
		if len(remotes) != tc.want {
			t.Errorf("%d Conns, %d streams per connection: %d connections, want %d", tc.conns, tc.streams, len(remotes), tc.want)
		}
	}
}

// TestH2ConnOutlivesItsDial: an HTTP/2 connection carries requests past
// the deadline of the attempt that dialled it, on one connection.
func TestH2ConnOutlivesItsDial(t *testing.T) {
	var mu sync.Mutex
	remotes := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes[r.RemoteAddr] = true
		mu.Unlock()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	conn := newTestClient(t, h2Request(srv.URL, 100*time.Millisecond), "").NewConn(template.NewVars(0))
	defer conn.Close()
	for end := time.Now().Add(400 * time.Millisecond); time.Now().Before(end); {
		if code, o := conn.Do(time.Now().Add(100 * time.Millisecond)); o != result.Success {
			t.Fatalf("Do() = %d, %v", code, o)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(remotes) != 1 {
		t.Errorf("%d connections, want 1", len(remotes))
	}
}
