package transport

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// newTestMux is the event loop's wire for req on the lean client.
func newTestMux(tb testing.TB, req config.Request) Mux {
	tb.Helper()
	m, err := newMux(tb, req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.Close)
	return m
}

func newMux(tb testing.TB, req config.Request) (Mux, error) {
	tb.Helper()
	c, _, err := Choose(context.Background(), "test", compileRequest(tb, req), false, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return c.(Muxer).NewMux()
}

// schemes are the two wires of the event loop.
var schemes = []string{"http", "https"}

// muxServer is a raw server whose connections handle serves, over plain
// HTTP/1.1 or over TLS (scheme https: handle then reads and writes through
// tls.Server), and the request of a client that trusts it.
func muxServer(t *testing.T, scheme string, handle func(net.Conn)) (*testkit.Server, config.Request) {
	t.Helper()
	if scheme == "http" {
		s := testkit.NewServer(t, handle)
		return s, testRequest(s.URL)
	}
	return rawTLSServer(t, handle)
}

// muxDo sends one request on m and collects answers, as an event loop does,
// until its own arrives or deadline passes: then it is dropped, and its
// outcome a timeout, as the loop judges it.
func muxDo(m Mux, deadline time.Time, answers []Answer) (Answer, []Answer) {
	c, _ := m.Send(true)
	for time.Now().Before(deadline) {
		answers = m.Answers(answers[:0])
		for _, a := range answers {
			if a.Conn == c {
				return a, answers
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	m.Drop(c)
	return Answer{Conn: c, Outcome: result.Timeout, At: time.Now()}, answers
}

// The event loop's wire gives every hostile server the outcome the lean
// client gives it, over plain HTTP/1.1 and over TLS, and no answer at all
// to one that holds on: the loop then gives up at the timeout.
func TestHostileServersThroughTheMux(t *testing.T) {
	for _, scheme := range schemes {
		for _, tc := range hostileServers {
			t.Run(scheme+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				_, req := muxServer(t, scheme, func(c net.Conn) {
					defer c.Close()
					if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
						return
					}
					tc.serve(c, func() {})
				})
				m := newTestMux(t, req)
				a, _ := muxDo(m, time.Now().Add(cmp.Or(tc.timeout, 300*time.Millisecond)), nil)
				if a.Code != httpCode(tc.code) || a.Outcome != tc.want {
					t.Errorf("answer %v, %v; want %d, %v", a.Code, a.Outcome, tc.code, tc.want)
				}
			})
		}
	}
}

// An answer is timed by the kernel when its bytes arrived, not by when the
// loop came to read it; a refused connection is refused; a reused
// connection the server closed while idle is dialled again for a request
// that can be sent twice, unseen. Over plain HTTP/1.1 and over TLS.
func TestMuxAnswers(t *testing.T) {
	for _, scheme := range schemes {
		t.Run(scheme, func(t *testing.T) { testMuxAnswers(t, scheme) })
	}
}

func testMuxAnswers(t *testing.T, scheme string) {
	t.Run("timed on arrival", func(t *testing.T) {
		_, req := muxServer(t, scheme, testkit.FixedServer)
		m := newTestMux(t, req)
		muxDo(m, time.Now().Add(time.Second), nil) // over TLS, the handshake is not timed here
		// The answer must be timed when it arrived, not when it was read
		// 200 ms later. On a virtual machine, a lost wake-up may hold the
		// answer itself until the next timer: 1 try in 20 under -race
		// here (docs/measurement.md, "The open loop's event loops"). A try
		// so held says nothing of the client; a client that times answers
		// when it reads them fails all three.
		testkit.ThreeTries(t, func() []string {
			sent := time.Now()
			c, _ := m.Send(true)
			time.Sleep(200 * time.Millisecond)
			answers := m.Answers(nil)
			if len(answers) != 1 || answers[0].Conn != c || answers[0].Outcome != result.Success {
				t.Fatalf("answers %+v, want one success on connection %d", answers, c)
			}
			if took := answers[0].At.Sub(sent); took < 0 || took > 50*time.Millisecond {
				return []string{fmt.Sprintf("answer timed %v after the send, read 200ms after it; want its arrival, within 50ms", took)}
			}
			return nil
		})
	})
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		req := testRequest("http://" + addr + "/")
		if scheme == "https" {
			_, req = rawTLSServer(t, testkit.FixedServer) // for TLS settings of a client
			req.URL = "https://" + addr + "/"
		}
		m := newTestMux(t, req)
		if a, _ := muxDo(m, time.Now().Add(time.Second), nil); a.Outcome != result.Refused {
			t.Errorf("outcome %v, want refused", a.Outcome)
		}
	})
	t.Run("closed while idle", func(t *testing.T) {
		// Answers each connection's first request, then closes it.
		s, req := muxServer(t, scheme, func(c net.Conn) {
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				io.WriteString(c, testkit.BenchResponse)
				time.Sleep(20 * time.Millisecond)
			}
		})
		m := newTestMux(t, req)
		var answers []Answer
		for i := range 3 {
			var a Answer
			a, answers = muxDo(m, time.Now().Add(time.Second), answers)
			if a.Outcome != result.Success {
				t.Errorf("request %d: outcome %v, want success", i, a.Outcome)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n, conns := s.Accepted.Load(), m.Conns(); n != 3 || conns != 1 {
			t.Errorf("%d connections accepted on %d of the loop's, want 3 on 1", n, conns)
		}
	})
	t.Run("keep-alive", func(t *testing.T) {
		s, req := muxServer(t, scheme, testkit.FixedAnswer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"))
		m := newTestMux(t, req)
		var answers []Answer
		for range 100 {
			var a Answer
			if a, answers = muxDo(m, time.Now().Add(time.Second), answers); a.Outcome != result.Success {
				t.Fatalf("outcome %v", a.Outcome)
			}
		}
		if n := s.Accepted.Load(); n != 1 {
			t.Errorf("%d connections for 100 requests in turn, want 1", n)
		}
	})
}

// A handshake the server never answers is given up on at the loop's
// timeout, its connection closed; the next request dials again.
func TestMuxHandshakeGivenUp(t *testing.T) {
	closed := make(chan struct{}, 2)
	s, req := muxServer(t, "http", func(c net.Conn) {
		io.Copy(io.Discard, c) // the client's hello, until it closes
		closed <- struct{}{}
	})
	_, trusted := rawTLSServer(t, testkit.FixedServer)
	req.URL, req.HTTPClientConfig = "https"+req.URL[len("http"):], trusted.HTTPClientConfig
	m := newTestMux(t, req)
	for i := range 2 {
		if a, _ := muxDo(m, time.Now().Add(200*time.Millisecond), nil); a.Outcome != result.Timeout {
			t.Errorf("request %d: outcome %v, want timeout", i, a.Outcome)
		}
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatalf("request %d: the connection of the handshake given up on is still open", i)
		}
	}
	if n := s.Accepted.Load(); n != 2 {
		t.Errorf("%d connections accepted, want 2", n)
	}
}

// Over TLS, the event loop carries HTTP/1.1: a client that offers h2 takes
// it to a server that answers in HTTP/1.1, and leaves one that chooses h2
// to the lean client.
func TestMuxOverTLSTakesHTTP1Only(t *testing.T) {
	h2 := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	h2.EnableHTTP2 = true
	h2.StartTLS()
	t.Cleanup(h2.Close)
	ca := writePEM(t, "ca.pem", "CERTIFICATE", h2.Certificate().Raw)
	req := httpsRequest(h2.URL+"/", commoncfg.TLSConfig{CAFile: ca})
	req.HTTPClientConfig.EnableHTTP2 = true
	if _, err := newMux(t, req); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("NewMux against a server that chooses h2: %v, want unsupported", err)
	}
	_, req = rawTLSServer(t, testkit.FixedServer) // no ALPN
	req.HTTPClientConfig.EnableHTTP2 = true
	m := newTestMux(t, req)
	if a, _ := muxDo(m, time.Now().Add(time.Second), nil); a.Outcome != result.Success {
		t.Errorf("outcome %v against a server that speaks HTTP/1.1, want success", a.Outcome)
	}
}

// TestMuxZeroAllocs checks the event loop's wire allocates nothing per
// request once its connection is up, as the lean client does.
func TestMuxZeroAllocs(t *testing.T) {
	for name, handle := range zeroAllocServers(30000) {
		t.Run(name, func(t *testing.T) {
			s := testkit.NewServer(t, handle)
			m := newTestMux(t, testRequest(s.URL))
			answers := make([]Answer, 0, 4)
			_, answers = muxDo(m, time.Now().Add(time.Second), answers) // dial
			if allocs := testing.AllocsPerRun(200, func() {
				var a Answer
				if a, answers = muxDo(m, time.Now().Add(time.Second), answers); a.Outcome != result.Success {
					t.Fatalf("outcome %v", a.Outcome)
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

// Over TLS the event loop's wire adds no allocation of its own to a
// request on an open connection: crypto/tls makes one (a 24-byte reader)
// each time it reads from the wire, for the answer's record and for the
// look that finds no record after it, and one for this raw server's read.
func TestMuxTLSZeroAllocs(t *testing.T) {
	s, req := rawTLSServer(t, testkit.FixedServer)
	m := newTestMux(t, req)
	answers := make([]Answer, 0, 4)
	_, answers = muxDo(m, time.Now().Add(time.Second), answers) // dial and handshake
	if allocs := testing.AllocsPerRun(200, func() {
		var a Answer
		if a, answers = muxDo(m, time.Now().Add(time.Second), answers); a.Outcome != result.Success {
			t.Fatalf("outcome %v", a.Outcome)
		}
	}); allocs > 3 {
		t.Errorf("%v allocations per request, want at most crypto/tls's three", allocs)
	}
	if n := s.Accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}
