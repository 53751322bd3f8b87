package transport

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/h1"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/prober/transport/std"
	"github.com/loadprobe/loadprobe/result"
)

// answer reads requests off a connection and writes resp to each; with
// closeAfter it closes the connection after the first, without saying so.
func answer(resp string, closeAfter bool) func(net.Conn) {
	return func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if _, err := io.WriteString(c, resp); err != nil || closeAfter {
				return
			}
		}
	}
}

// basicAuth is the Authorization header of basic credentials.
func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// compileRequest is req compiled as config compiles a probe's.
func compileRequest(tb testing.TB, req config.Request) *plan.Request {
	tb.Helper()
	return compileProbe(tb, config.Probe{Request: req}).Request
}

// compileProbe is p compiled as config compiles a probe, with the
// defaults of the sections it leaves out, a name and one level.
func compileProbe(tb testing.TB, p config.Probe) *plan.Probe {
	tb.Helper()
	full := config.DefaultProbe
	full.Name, full.Request, full.Flow, full.Load.Concurrency = "test", p.Request, p.Flow, []int{1}
	for i := range full.Flow {
		if full.Flow[i].Request.Method == "" {
			full.Flow[i].Request.Method = "GET"
		}
	}
	compiled, err := config.Compile(full)
	if err != nil {
		tb.Fatal(err)
	}
	return compiled
}

func testRequest(rawURL string) config.Request {
	req := config.DefaultRequest
	req.URL = rawURL
	req.Timeout = model.Duration(2 * time.Second)
	return req
}

// newTestClient builds a client for path "fast" or "std", or lets newClient
// choose ("").
// httpCode is the code of HTTP status n, or no code for 0 (no response).
func httpCode(n int) result.Code {
	if n == 0 {
		return result.Code{}
	}
	return result.HTTPStatus(n)
}

func newTestClient(tb testing.TB, req config.Request, path string) Transport {
	tb.Helper()
	var c Transport
	var err error
	compiled := compileRequest(tb, req)
	switch path {
	case "":
		c, _, err = Choose(context.Background(), "test", compiled, false, nil)
	case "fast":
		c, err = adapt(h1.New(compiled))
	case "std":
		c, err = adapt(std.New(compiled, "test"))
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

func closedPortURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

var paths = []string{"fast", "std"}

func TestClientOutcomes(t *testing.T) {
	tlsServer := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer tlsServer.Close()

	for _, tc := range []struct {
		name   string
		url    func(t *testing.T) string // default: a raw server running handle
		handle func(net.Conn)
		setup  func(*config.Request)
		paths  []string // default: both
		code   int
		want   result.Outcome
	}{
		{name: "200", handle: answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false), code: 200, want: result.Success},
		{name: "503", handle: answer("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n", false), code: 503, want: result.HTTPError},
		{name: "503 valid", handle: answer("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n", false),
			setup: func(r *config.Request) { r.ValidStatusCodes = []int{503} }, code: 503, want: result.Success},
		{name: "200 not valid", handle: answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false),
			setup: func(r *config.Request) { r.ValidStatusCodes = []int{503} }, code: 200, want: result.HTTPError},
		{name: "redirect not followed", handle: answer("HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n", false),
			code: 302, want: result.HTTPError},
		{name: "refused", url: closedPortURL, want: result.Refused},
		{name: "reset", handle: func(c net.Conn) {
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}, want: result.Reset},
		{name: "closed without answer", handle: func(c net.Conn) { c.Close() }, want: result.Reset},
		{name: "closed after reading", handle: func(c net.Conn) {
			http.ReadRequest(bufio.NewReader(c))
			c.Close()
		}, want: result.Reset},
		{name: "untrusted tls", url: func(*testing.T) string { return tlsServer.URL }, paths: []string{"std"}, want: result.TLS},
		{name: "tls to plain server", handle: func(c net.Conn) {
			io.WriteString(c, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
			c.Close()
		},
			setup: func(r *config.Request) { r.URL = strings.Replace(r.URL, "http:", "https:", 1) }, paths: []string{"std"}, want: result.TLS},
		{name: "dns", url: func(*testing.T) string { return "http://nonexistent.invalid/" }, want: result.DNS},
	} {
		for _, path := range paths {
			if tc.paths != nil && !contains(tc.paths, path) {
				continue
			}
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				var u string
				if tc.url != nil {
					u = tc.url(t)
				} else {
					u = testkit.NewServer(t, tc.handle).URL
				}
				req := testRequest(u)
				if tc.setup != nil {
					tc.setup(&req)
				}
				conn := newTestClient(t, req, path).NewConn(template.NewVars(0))
				defer conn.Close()
				if code, o := conn.Do(time.Now().Add(5 * time.Second)); code != httpCode(tc.code) || o != tc.want {
					t.Errorf("Do() = %v, %v; want %d, %v", code, o, tc.code, tc.want)
				}
			})
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestClientResponses covers the ways a response can be framed. Each case
// sends several requests over one Conn and checks how many connections the
// server saw: one when the connection can be kept, one per request when not.
func TestClientResponses(t *testing.T) {
	const n = 3
	big := strings.Repeat("x", 64<<10)
	overLimit := wire.MaxBodyBytes + 100
	for _, tc := range []struct {
		name   string
		resp   string
		handle func(net.Conn) // instead of resp
		setup  func(*config.Request)
		code   int
		conns  int64 // connections for n requests
	}{
		{name: "content length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", code: 200, conns: 1},
		{name: "large content length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n\r\n" + big, code: 200, conns: 1},
		{name: "empty", resp: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", code: 200, conns: 1},
		{name: "chunked", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n", code: 200, conns: 1},
		{name: "chunked with trailers", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", code: 200, conns: 1},
		{name: "chunked large", resp: "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n10000\r\n" + big + "\r\n0\r\n\r\n", code: 200, conns: 1},
		{name: "header case", resp: "HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 5\r\nx-other: y\r\n\r\nhello", code: 200, conns: 1},
		{name: "no reason phrase", resp: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", code: 200, conns: 1},
		{name: "connection close", resp: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello", code: 200, conns: n},
		{name: "connection close token", resp: "HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\nContent-Length: 5\r\n\r\nhello", code: 200, conns: n},
		{name: "http/1.0", resp: "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", code: 200, conns: n},
		{name: "http/1.0 keep-alive", resp: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello", code: 200, conns: 1},
		{name: "read until close", handle: answerUntilClose("HTTP/1.1 200 OK\r\n\r\n" + big), code: 200, conns: n},
		{name: "http/1.0 read until close", handle: answerUntilClose("HTTP/1.0 200 OK\r\n\r\nhello"), code: 200, conns: n},
		{name: "204", resp: "HTTP/1.1 204 No Content\r\n\r\n", code: 204, conns: 1},
		{name: "304", resp: "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", code: 304, conns: 1},
		{name: "head", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
			setup: func(r *config.Request) { r.Method = "HEAD" }, code: 200, conns: 1},
		{name: "1xx interim", resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", code: 200, conns: 1},
		{name: "long header line", resp: "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", 20<<10) + "\r\nContent-Length: 5\r\n\r\nhello", code: 200, conns: 1},
		{name: "over body limit", resp: fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", overLimit, strings.Repeat("x", overLimit)), code: 200, conns: n},
		{name: "chunked over body limit", resp: fmt.Sprintf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", overLimit, strings.Repeat("x", overLimit)), code: 200, conns: n},
		{name: "keep_alive false", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
			setup: func(r *config.Request) { r.KeepAlive = false }, code: 200, conns: n},
		// A server that closes an idle keep-alive connection without saying so:
		// the next request goes out again on a fresh connection, as net/http
		// does, instead of counting the race as a reset.
		{name: "closed while idle", handle: answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", true), code: 200, conns: n},
	} {
		for _, path := range paths {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				handle := tc.handle
				if handle == nil {
					handle = answer(tc.resp, false)
				}
				s := testkit.NewServer(t, handle)
				req := testRequest(s.URL)
				if tc.setup != nil {
					tc.setup(&req)
				}
				conn := newTestClient(t, req, path).NewConn(template.NewVars(0))
				defer conn.Close()
				for i := range n {
					if i > 0 && tc.conns == n {
						// Let the server's close reach the client first.
						time.Sleep(10 * time.Millisecond)
					}
					deadline := time.Now().Add(5 * time.Second)
					code, o := conn.Do(deadline)
					if code != httpCode(tc.code) || o != result.Success && o != result.HTTPError {
						t.Fatalf("request %d: Do() = %v, %v; want %d", i, code, o, tc.code)
					}
					// A whole response is read when it has come, not when
					// the client gives up waiting for more.
					if time.Now().After(deadline) {
						t.Errorf("request %d: answered at its deadline", i)
					}
				}
				if got := s.Accepted.Load(); got != tc.conns {
					t.Errorf("%d requests opened %d connections, want %d", n, got, tc.conns)
				}
			})
		}
	}
}

// answerUntilClose writes resp to the first request and closes the
// connection: the body runs to the close.
func answerUntilClose(resp string) func(net.Conn) {
	return func(c net.Conn) {
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, resp)
	}
}

// TestClientRequest checks that what the server receives is what the config says.
func TestClientRequest(t *testing.T) {
	dir := t.TempDir()
	passwordFile := filepath.Join(dir, "password")
	if err := os.WriteFile(passwordFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		method, uri, host, ua, body, contentType, custom, auth, conn string
		contentLength                                                int64
	}
	for _, tc := range []struct {
		name  string
		setup func(*config.Request)
		check func(t *testing.T, s seen)
	}{
		{name: "get", check: func(t *testing.T, s seen) {
			if s.method != "GET" || s.uri != "/path?q=1" || s.body != "" || !strings.HasPrefix(s.ua, "loadprobe/") {
				t.Errorf("got %+v", s)
			}
		}},
		{name: "post", setup: func(r *config.Request) {
			r.Method = "POST"
			r.Body = `{"a": 1}`
			r.Headers = map[string]string{"content-type": "application/json", "X-Custom": "v 1", "Host": "example.test"}
		}, check: func(t *testing.T, s seen) {
			if s.method != "POST" || s.body != `{"a": 1}` || s.contentLength != 8 ||
				s.contentType != "application/json" || s.custom != "v 1" || s.host != "example.test" {
				t.Errorf("got %+v", s)
			}
		}},
		{name: "empty post", setup: func(r *config.Request) { r.Method = "POST" }, check: func(t *testing.T, s seen) {
			if s.method != "POST" || s.contentLength != 0 || s.body != "" {
				t.Errorf("got %+v", s)
			}
		}},
		{name: "user agent", setup: func(r *config.Request) {
			r.Headers = map[string]string{"User-Agent": "mine"}
		}, check: func(t *testing.T, s seen) {
			if s.ua != "mine" {
				t.Errorf("User-Agent %q, want mine", s.ua)
			}
		}},
		{name: "basic auth", setup: func(r *config.Request) {
			r.HTTPClientConfig.BasicAuth = &commoncfg.BasicAuth{Username: "user", PasswordFile: passwordFile}
		}, check: func(t *testing.T, s seen) {
			if want := basicAuth("user", "s3cret"); s.auth != want {
				t.Errorf("Authorization %q, want %q", s.auth, want)
			}
		}},
		{name: "authorization", setup: func(r *config.Request) {
			r.HTTPClientConfig.Authorization = &commoncfg.Authorization{Type: "Bearer", CredentialsFile: passwordFile}
		}, check: func(t *testing.T, s seen) {
			if s.auth != "Bearer s3cret" {
				t.Errorf("Authorization %q, want Bearer s3cret", s.auth)
			}
		}},
		{name: "authorization header wins", setup: func(r *config.Request) {
			r.HTTPClientConfig.Authorization = &commoncfg.Authorization{Type: "Bearer", Credentials: "config"}
			r.Headers = map[string]string{"Authorization": "Token header"}
		}, check: func(t *testing.T, s seen) {
			if s.auth != "Token header" {
				t.Errorf("Authorization %q, want Token header", s.auth)
			}
		}},
		{name: "keep_alive false", setup: func(r *config.Request) { r.KeepAlive = false }, check: func(t *testing.T, s seen) {
			if s.conn != "close" {
				t.Errorf("Connection %q, want close", s.conn)
			}
		}},
	} {
		for _, path := range paths {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				got := make(chan seen, 1)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					got <- seen{
						method: r.Method, uri: r.RequestURI, host: r.Host, ua: r.UserAgent(), body: string(body),
						contentType: r.Header.Get("Content-Type"), custom: r.Header.Get("X-Custom"),
						auth: r.Header.Get("Authorization"), conn: r.Header.Get("Connection"),
						contentLength: r.ContentLength,
					}
				}))
				defer srv.Close()
				req := testRequest(srv.URL + "/path?q=1")
				if tc.setup != nil {
					tc.setup(&req)
				}
				conn := newTestClient(t, req, path).NewConn(template.NewVars(0))
				defer conn.Close()
				if code, o := conn.Do(time.Now().Add(5 * time.Second)); code != result.HTTPStatus(200) || o != result.Success {
					t.Fatalf("Do() = %d, %v", code, o)
				}
				tc.check(t, <-got)
			})
		}
	}
}

func TestClientPath(t *testing.T) {
	proxy, _ := url.Parse("http://127.0.0.1:3128")
	for _, tc := range []struct {
		name  string
		url   string
		setup func(*config.Request)
		want  string
	}{
		{name: "http", url: "http://127.0.0.1:8080/", want: "fast"},
		{name: "http with basic auth", url: "http://127.0.0.1:8080/",
			setup: func(r *config.Request) {
				r.HTTPClientConfig.BasicAuth = &commoncfg.BasicAuth{Username: "u", Password: "p"}
			}, want: "fast"},
		{name: "https", url: "https://127.0.0.1:8443/", want: "fast"},
		{name: "https without HTTP/2", url: "https://127.0.0.1:8443/",
			setup: func(r *config.Request) { r.HTTPClientConfig.EnableHTTP2 = false }, want: "fast"},
		{name: "proxy_url", url: "http://127.0.0.1:8080/",
			setup: func(r *config.Request) { r.HTTPClientConfig.ProxyURL = commoncfg.URL{URL: proxy} }, want: "std"},
		{name: "proxy_from_environment", url: "http://127.0.0.1:8080/",
			setup: func(r *config.Request) { r.HTTPClientConfig.ProxyFromEnvironment = true }, want: "std"},
		{name: "follow_redirects", url: "http://127.0.0.1:8080/",
			setup: func(r *config.Request) { r.HTTPClientConfig.FollowRedirects = true }, want: "std"},
		{name: "oauth2", url: "http://127.0.0.1:8080/",
			setup: func(r *config.Request) {
				r.HTTPClientConfig.OAuth2 = &commoncfg.OAuth2{ClientID: "id", ClientSecret: "s", TokenURL: "http://127.0.0.1:1/token"}
			}, want: "std"},
		{name: "http_headers", url: "http://127.0.0.1:8080/",
			setup: func(r *config.Request) {
				r.HTTPClientConfig.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-A": {Values: []string{"b"}}}}
			}, want: "std"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := testRequest(tc.url)
			if tc.setup != nil {
				tc.setup(&req)
			}
			got := "std"
			if _, fast := newTestClient(t, req, "").(*h1.Client); fast {
				got = "fast"
			}
			if got != tc.want {
				t.Errorf("path = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClientInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*config.Request)
	}{
		{name: "url", setup: func(r *config.Request) { r.URL = "http://[::1" }},
		{name: "password file", setup: func(r *config.Request) {
			r.HTTPClientConfig.BasicAuth = &commoncfg.BasicAuth{Username: "u", PasswordFile: "/nonexistent/password"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := testRequest("http://127.0.0.1:8080/")
			tc.setup(&req)
			p := config.DefaultProbe
			p.Name, p.Request, p.Load.Concurrency = "test", req, []int{1}
			if _, err := config.Compile(p); err == nil {
				t.Error("config.Compile() did not fail")
			}
		})
	}
}

// TestClientRedirect checks that follow_redirects follows a redirect to the
// same host, and never one to another host.
func TestClientRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/here":
			http.Redirect(w, r, "/there", http.StatusFound)
		case "/away":
			http.Redirect(w, r, "http://example.invalid/", http.StatusFound)
		}
	}))
	defer srv.Close()
	for path, want := range map[string]result.Code{"/here": result.HTTPStatus(200), "/away": result.HTTPStatus(302)} {
		req := testRequest(srv.URL + path)
		req.HTTPClientConfig.FollowRedirects = true
		conn := newTestClient(t, req, "").NewConn(template.NewVars(0))
		if code, _ := conn.Do(time.Now().Add(5 * time.Second)); code != want {
			t.Errorf("%s: code %d, want %d", path, code, want)
		}
		conn.Close()
	}
}

// TestClientStdOwnConnection checks that on the std path, as on the fast
// one, each Conn holds a connection of its own, HTTP/2 included: a level of
// N connections opens N connections, not N streams over a shared one.
func TestClientStdOwnConnection(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("http2=%v", h2), func(t *testing.T) {
			var conns atomic.Int64
			protos := make(chan string, 100)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				protos <- r.Proto
			}))
			srv.EnableHTTP2 = h2
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.StartTLS()
			defer srv.Close()
			req := testRequest(srv.URL)
			req.HTTPClientConfig.EnableHTTP2 = h2
			req.HTTPClientConfig.TLSConfig.InsecureSkipVerify = true
			c := newTestClient(t, req, "")
			const n, requests = 3, 4
			var wg sync.WaitGroup
			for range n {
				conn := c.NewConn(template.NewVars(0))
				defer conn.Close()
				wg.Go(func() {
					for range requests {
						if code, o := conn.Do(time.Now().Add(5 * time.Second)); o != result.Success {
							t.Errorf("Do() = %d, %v", code, o)
						}
					}
				})
			}
			wg.Wait()
			if got := conns.Load(); got != n {
				t.Errorf("%d Conns opened %d connections, want %d", n, got, n)
			}
			want := "HTTP/1.1"
			if h2 {
				want = "HTTP/2.0"
			}
			if got := <-protos; got != want {
				t.Errorf("protocol %s, want %s", got, want)
			}
		})
	}
}

// TestClientOAuth2 checks that with oauth2 the Conns share one token.
func TestClientOAuth2(t *testing.T) {
	var tokens atomic.Int64
	tokenServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token": "tok", "token_type": "Bearer", "expires_in": 3600}`)
	}))
	defer tokenServer.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	req := testRequest(srv.URL)
	req.HTTPClientConfig.OAuth2 = &commoncfg.OAuth2{ClientID: "id", ClientSecret: "secret", TokenURL: tokenServer.URL}
	c := newTestClient(t, req, "")
	for range 3 {
		conn := c.NewConn(template.NewVars(0))
		for range 2 {
			if code, o := conn.Do(time.Now().Add(5 * time.Second)); o != result.Success {
				t.Fatalf("Do() = %d, %v", code, o)
			}
		}
		defer conn.Close()
	}
	if n := tokens.Load(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
}

// TestClientClose checks that Client.Close releases the connections of
// Conns that were not closed.
func TestClientClose(t *testing.T) {
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			closed := make(chan struct{}, 1)
			s := testkit.NewServer(t, func(c net.Conn) {
				answer(testkit.BenchResponse, false)(c)
				closed <- struct{}{}
			})
			c := newTestClient(t, testRequest(s.URL), path)
			conn := c.NewConn(template.NewVars(0))
			deadline := time.Now().Add(5 * time.Second)
			for range 2 { // the second sets a deadline the third keeps
				if _, o := conn.Do(deadline); o != result.Success {
					t.Fatalf("outcome %v", o)
				}
			}
			c.Close()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("the connection is still open after Client.Close")
			}
			// A Conn used after Close dials again, though its deadline is
			// not set again.
			if _, o := conn.Do(deadline); o != result.Success {
				t.Errorf("after Close: outcome %v", o)
			}
			conn.Close()
		})
	}
}

// TestClientFastZeroAllocs checks the goal of the lean client: no allocation
// per request once the connection is up.
func TestClientFastZeroAllocs(t *testing.T) {
	for name, handle := range zeroAllocServers(100000) {
		t.Run(name, func(t *testing.T) {
			s := testkit.NewServer(t, handle)
			conn := newTestClient(t, testRequest(s.URL), "fast").NewConn(template.NewVars(0))
			defer conn.Close()
			deadline := time.Now().Add(time.Minute)
			conn.Do(deadline) // dial
			if allocs := testing.AllocsPerRun(200, func() {
				if _, o := conn.Do(deadline); o != result.Success {
					t.Fatalf("outcome %v", o)
				}
			}); allocs != 0 {
				t.Errorf("%v allocations per request, want 0", allocs)
			}
			if n := s.Accepted.Load(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
		})
	}
}

// zeroAllocServers are the servers a zero-allocation test reads from: a
// response by its length, a chunked one, and one whose body is large
// bytes long.
func zeroAllocServers(large int) map[string]func(net.Conn) {
	return map[string]func(net.Conn){
		"content length": testkit.FixedServer,
		"chunked":        testkit.FixedAnswer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
		"large body":     testkit.FixedAnswer(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", large) + strings.Repeat("x", large)),
	}
}

// BenchmarkConnDo measures one request over a kept-alive connection to a
// server that costs next to nothing. Besides wall time per request it reports
// cpu-ns/op, the process's CPU time per request: the client's cost plus the
// small, equal cost of the in-process server, and less sensitive than wall
// time to whatever else runs on the machine.
func BenchmarkConnDo(b *testing.B) {
	s := testkit.NewServer(b, testkit.FixedServer)
	for _, path := range paths {
		b.Run(path, func(b *testing.B) {
			c := newTestClient(b, testRequest(s.URL), path)
			conn := c.NewConn(template.NewVars(0))
			defer conn.Close()
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				if _, o := conn.Do(time.Now().Add(5 * time.Second)); o != result.Success {
					b.Fatalf("outcome %v", o)
				}
			}
			testkit.ReportCPU(b, cpu)
		})
	}
	// 50 workers, one Conn each, as the engine runs them.
	for _, path := range paths {
		b.Run(path+"/parallel", func(b *testing.B) {
			c := newTestClient(b, testRequest(s.URL), path)
			b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			defer testkit.ReportCPU(b, cpu)
			b.RunParallel(func(pb *testing.PB) {
				conn := c.NewConn(template.NewVars(0))
				defer conn.Close()
				for pb.Next() {
					if _, o := conn.Do(time.Now().Add(5 * time.Second)); o != result.Success {
						b.Errorf("outcome %v", o)
						return
					}
				}
			})
		})
	}
}
