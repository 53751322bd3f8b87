package transport

import (
	"bufio"
	"cmp"
	"crypto/tls"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/prober/transport/h1"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// hostileServers answer a request the way a broken or hostile server does.
// Each reads the request first, then serve writes its bytes; held is called
// once the server has said all it will and only holds the connection (or
// drips), so that a test can abort an attempt that is stuck there.
var hostileServers = []struct {
	name    string
	serve   func(c net.Conn, held func())
	timeout time.Duration // of the attempt, when not 300ms
	code    int
	want    result.Outcome
}{
	{name: "garbage lines", serve: writeClose(garbage(1, 4000, true)), want: result.Other},
	// net/http reads a line cut by the close at a multiple of its 4 KiB
	// buffer as a cut stream (reset), any other as a line (other): 4000.
	{name: "garbage without a line end", serve: writeClose(garbage(2, 4000, false)), want: result.Other},
	{name: "garbage held", serve: writeHold(garbage(3, 100, false)), want: result.Timeout},
	{name: "status line never sent", serve: writeHold(""), want: result.Timeout},
	{name: "headers never finished", serve: writeHold("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"), want: result.Timeout},
	{name: "101 and hold", serve: writeHold("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n"), want: result.Timeout},
	{name: "101 and close", serve: writeClose("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\nbytes"),
		code: 101, want: result.HTTPError},
	{name: "101 and close after the deadline", serve: func(c net.Conn, held func()) {
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		held()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c) // until the client closes, or 5 s
	}, want: result.Timeout},
	// A 101 that switches nothing is a final response without a body.
	{name: "101 without upgrade headers", serve: writeHold("HTTP/1.1 101 Switching Protocols\r\n\r\nbytes"),
		code: 101, want: result.HTTPError},
	{name: "100 and hold", serve: writeHold("HTTP/1.1 100 Continue\r\n\r\n"), want: result.Timeout},
	{name: "endless 1xx", serve: func(c net.Conn, held func()) {
		repeatWrite(c, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n", 2*wire.MaxHeaderBytes)
	}, timeout: time.Minute, want: result.Other}, // net/http takes its time to parse 10 MiB
	{name: "body never ends", serve: writeHold("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello"), want: result.Timeout},
	{name: "chunked body never ends", serve: writeHold("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"), want: result.Timeout},
	{name: "close-delimited body never ends", serve: writeHold("HTTP/1.1 200 OK\r\n\r\nhello"), want: result.Timeout},
	{name: "slow drip headers", serve: drip("HTTP/1.1 200 OK\r\nX-Slow: " + strings.Repeat("x", 1000)), want: result.Timeout},
	{name: "slow drip body", serve: drip("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + strings.Repeat("x", 1000)), want: result.Timeout},
	{name: "headers under the limit", serve: writeClose("HTTP/1.1 200 OK\r\n" + bigHeaders(wire.MaxHeaderBytes/4) + "Content-Length: 2\r\n\r\nok"),
		code: 200, timeout: time.Minute, want: result.Success},
	{name: "headers over the limit", serve: writeClose("HTTP/1.1 200 OK\r\n" + bigHeaders(wire.MaxHeaderBytes+64<<10) + "Content-Length: 2\r\n\r\nok"),
		timeout: time.Minute, want: result.Other},
	{name: "endless headers", serve: func(c net.Conn, held func()) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		repeatWrite(c, "X-A: b\r\n", 2*wire.MaxHeaderBytes)
	}, timeout: time.Minute, want: result.Other},
	{name: "malformed chunked", serve: writeClose("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"), want: result.Other},
	{name: "malformed status", serve: writeClose("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"), want: result.Other},
	{name: "malformed header", serve: writeClose("HTTP/1.1 200 OK\r\nno colon\r\nContent-Length: 0\r\n\r\n"), want: result.Other},
	{name: "malformed content length", serve: writeClose("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"), want: result.Other},
	{name: "conflicting lengths", serve: writeClose("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"), want: result.Other},
	{name: "close before answering", serve: writeClose(""), want: result.Reset},
	{name: "close mid-status line", serve: writeClose("HTTP/1.1 20"), want: result.Other},
	{name: "close mid-headers", serve: writeClose("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"), want: result.Reset},
	{name: "close mid-body", serve: writeClose("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello"), want: result.Reset},
	{name: "close mid-chunk", serve: writeClose("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\nhello"), want: result.Reset},
	{name: "reset mid-body", serve: func(c net.Conn, _ func()) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
		if tc, ok := c.(*tls.Conn); ok {
			c = tc.NetConn()
		}
		c.(*net.TCPConn).SetLinger(0)
	}, want: result.Reset},
}

func writeClose(s string) func(net.Conn, func()) {
	return func(c net.Conn, _ func()) { io.WriteString(c, s) }
}

func writeHold(s string) func(net.Conn, func()) {
	return func(c net.Conn, held func()) {
		io.WriteString(c, s)
		held()
		io.Copy(io.Discard, c) // until the client or the test closes it
	}
}

// drip writes s one byte every 20 ms, for as long as the client reads.
func drip(s string) func(net.Conn, func()) {
	return func(c net.Conn, held func()) {
		for i := range len(s) {
			if _, err := io.WriteString(c, s[i:i+1]); err != nil {
				return
			}
			if i == 0 {
				held()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// repeatWrite writes s until n bytes are written or the client stops reading.
func repeatWrite(c net.Conn, s string, n int) {
	chunk := strings.Repeat(s, max(1, (64<<10)/len(s)))
	for written := 0; written < n; written += len(chunk) {
		if _, err := io.WriteString(c, chunk); err != nil {
			return
		}
	}
}

// garbage is n random bytes that are not HTTP, with or without line ends.
func garbage(seed uint64, n int, lines bool) string {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
		if !lines && b[i] == '\n' {
			b[i] = 'x'
		}
	}
	b[0] = 0x16 // no "HTTP/" start by chance
	return string(b)
}

// bigHeaders is n bytes or more of header lines of 8 KiB.
func bigHeaders(n int) string {
	line := "X-Big: " + strings.Repeat("b", 8<<10) + "\r\n"
	return strings.Repeat(line, n/len(line)+1)
}

// hostilePaths sends a request through each client path the way a config
// selects it: the fast path by default, net/http by follow_redirects.
var hostilePaths = map[string]func(*config.Request){
	"fast": func(*config.Request) {},
	"std":  func(r *config.Request) { r.HTTPClientConfig.FollowRedirects = true },
}

// TestHostileServers runs one table of hostile servers through both client
// paths: both give the same outcome, and an attempt ends by its deadline
// whatever the server does with the socket, or at once on Abort.
func TestHostileServers(t *testing.T) {
	// liveness bounds an attempt that should end by its deadline: a client
	// that waits for the server instead fails the test rather than hang it.
	const liveness = 4 * time.Second
	for _, tc := range hostileServers {
		for path, setup := range hostilePaths {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				timeout := cmp.Or(tc.timeout, 300*time.Millisecond)
				held := make(chan struct{}, 1)
				s := testkit.NewServer(t, func(c net.Conn) {
					defer c.Close()
					if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
						return
					}
					tc.serve(c, func() { held <- struct{}{} })
				})
				req := testRequest(s.URL)
				setup(&req)
				client := newTestClient(t, req, "")
				if _, fast := client.(*h1.Client); fast != (path == "fast") {
					t.Fatalf("the request did not take the %s path", path)
				}

				start := time.Now()
				code, o, ok := doWithin(client.NewConn(template.NewVars(0)), start.Add(timeout), liveness)
				if !ok {
					t.Fatalf("the attempt did not end within %v of its %v deadline", liveness, timeout)
				}
				if code != httpCode(tc.code) || o != tc.want {
					t.Errorf("Do() = %v, %v; want %d, %v", code, o, tc.code, tc.want)
				}
				if elapsed := time.Since(start); o == result.Timeout && elapsed < timeout {
					t.Errorf("timeout after %v, before the %v deadline", elapsed, timeout)
				}
				if tc.want != result.Timeout {
					return
				}

				// The same attempt with a distant deadline ends on Abort.
				<-held
				conn := client.NewConn(template.NewVars(0))
				ended := make(chan result.Outcome, 1)
				go func() {
					_, o := conn.Do(time.Now().Add(time.Hour))
					ended <- o
				}()
				<-held
				client.Abort()
				select {
				case o := <-ended:
					if o == result.Success || o == result.Timeout {
						t.Errorf("an aborted attempt ended as %v", o)
					}
				case <-time.After(liveness):
					t.Fatalf("the attempt did not end within %v of Abort", liveness)
				}
			})
		}
	}
}

// doWithin runs conn.Do and waits for it at most bound past the deadline.
func doWithin(conn Conn, deadline time.Time, bound time.Duration) (result.Code, result.Outcome, bool) {
	type done struct {
		code result.Code
		o    result.Outcome
	}
	ch := make(chan done, 1)
	go func() {
		code, o := conn.Do(deadline)
		ch <- done{code, o}
	}()
	select {
	case d := <-ch:
		return d.code, d.o, true
	case <-time.After(time.Until(deadline) + bound):
		return result.Code{}, 0, false
	}
}
