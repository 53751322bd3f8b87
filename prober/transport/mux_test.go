package transport

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// newTestMux is the event loop's wire for req on the lean client.
func newTestMux(tb testing.TB, rawURL string) Mux {
	tb.Helper()
	c, _, err := Choose(context.Background(), "test", compileRequest(tb, testRequest(rawURL)), false, nil)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := c.(Muxer).NewMux()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.Close)
	return m
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
// client gives it, and no answer at all to one that holds on: the loop
// then gives up at the timeout.
func TestHostileServersThroughTheMux(t *testing.T) {
	for _, tc := range hostileServers {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testkit.NewServer(t, func(c net.Conn) {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				tc.serve(c, func() {})
			})
			m := newTestMux(t, s.URL)
			a, _ := muxDo(m, time.Now().Add(cmp.Or(tc.timeout, 300*time.Millisecond)), nil)
			if a.Code != httpCode(tc.code) || a.Outcome != tc.want {
				t.Errorf("answer %v, %v; want %d, %v", a.Code, a.Outcome, tc.code, tc.want)
			}
		})
	}
}

// An answer is timed by the kernel when its bytes arrived, not by when the
// loop came to read it; a refused connection is refused; a reused
// connection the server closed while idle is dialled again for a request
// that can be sent twice, unseen.
func TestMuxAnswers(t *testing.T) {
	t.Run("timed on arrival", func(t *testing.T) {
		s := testkit.NewServer(t, testkit.FixedServer)
		m := newTestMux(t, s.URL)
		c, _ := m.Send(true)
		sent := time.Now()
		time.Sleep(200 * time.Millisecond)
		answers := m.Answers(nil)
		if len(answers) != 1 || answers[0].Conn != c || answers[0].Outcome != result.Success {
			t.Fatalf("answers %+v, want one success on connection %d", answers, c)
		}
		if took := answers[0].At.Sub(sent); took < 0 || took > 50*time.Millisecond {
			t.Errorf("answer timed %v after the send, read 200ms after it; want its arrival, within 50ms", took)
		}
	})
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		m := newTestMux(t, "http://"+addr+"/")
		if a, _ := muxDo(m, time.Now().Add(time.Second), nil); a.Outcome != result.Refused {
			t.Errorf("outcome %v, want refused", a.Outcome)
		}
	})
	t.Run("closed while idle", func(t *testing.T) {
		// Answers each connection's first request, then closes it.
		s := testkit.NewServer(t, func(c net.Conn) {
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				io.WriteString(c, testkit.BenchResponse)
				time.Sleep(20 * time.Millisecond)
			}
		})
		m := newTestMux(t, s.URL)
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
		s := testkit.NewServer(t, testkit.FixedAnswer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"))
		m := newTestMux(t, s.URL)
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

// TestMuxZeroAllocs checks the event loop's wire allocates nothing per
// request once its connection is up, as the lean client does.
func TestMuxZeroAllocs(t *testing.T) {
	for name, handle := range zeroAllocServers(30000) {
		t.Run(name, func(t *testing.T) {
			s := testkit.NewServer(t, handle)
			m := newTestMux(t, s.URL)
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
