package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// maxBodyBytes is how much of a response body an attempt reads. Beyond it the
// connection is closed instead of reading on: the status code is what counts,
// and a huge body would measure the generator's network more than the target.
const maxBodyBytes = 10 << 20

// httpClient is the connector of one probe's HTTP request.
//
// Requests whose settings need nothing of net/http go through a lean
// HTTP/1.1 client (client_fast.go) that serializes the request once and
// allocates nothing per attempt, over crypto/tls for https (client_tls.go),
// or through a lean HTTP/2 client when the server picks h2 by ALPN
// (client_h2.go); everything else (proxies, OAuth2, redirects,
// http_headers, secret references) goes through net/http
// configured by prometheus/common (client_std.go). Both keep one TCP
// connection per Conn (but for OAuth2, see client_std.go), send the headers
// that headers.go decides, and classify failures the same way (classify.go).
//
// Both paths behave alike where it shows in the figures:
//   - basic_auth, authorization and bearer_token, with their *_file variants,
//     are read once, when the client is built, and sent as a fixed header on
//     the fast path; a header set in headers comes first, as in net/http;
//   - a body is read to its end and dropped, up to maxBodyBytes; past it the
//     connection is closed and the response counts by its status code;
//   - a request that found its kept-alive connection closed by the server
//     before any byte of a response is sent again once on a new connection
//     when it is idempotent, as net/http does, so that the keep-alive race is
//     not counted as a reset of the target;
//   - a redirect is the response, unless follow_redirects is set; then only
//     redirects to the same host are followed;
//   - the fast path reads a response as net/http does (response.go) and
//     both bound its headers by maxHeaderBytes, so the same bytes give the
//     same outcome;
//   - an attempt ends by its deadline, as a timeout, whatever the server
//     does with the connection (a 101 response's included), and at once on
//     Abort.
type httpClient = connector

// newClient builds the client of the probe name's request req: the lean
// one, or net/http when std says so (a flow step that captures a value
// reads its response there) or when req needs it (req.NetHTTP). It does
// not dial.
func newClient(req *plan.Request, name string, std bool) (httpClient, error) {
	if std || req.NetHTTP != "" {
		return newStdClient(req, name)
	}
	return newFastClient(req)
}

// ClientPath names the client that sends p's requests, for `loadprobe run`
// to say: the lean HTTP/1.1 client, over TLS for https, or net/http and the
// setting that needs it; for a flow, each step's.
func ClientPath(p *plan.Probe) string {
	switch {
	case len(p.Flow) > 0:
		steps := make([]string, len(p.Flow))
		for i, st := range p.Flow {
			steps[i] = st.Name + ": " + requestPath(st.Request, len(st.Captures) > 0)
		}
		return "flow (" + strings.Join(steps, "; ") + ")"
	case p.Request.WebSocket():
		return "WebSocket (gorilla/websocket)"
	case p.Request.GRPC != nil:
		return fmt.Sprintf("gRPC (lean HTTP/2 client, connections: %d)", p.Request.GRPC.Connections)
	}
	return requestPath(p.Request, false)
}

func requestPath(req *plan.Request, captures bool) string {
	why := req.NetHTTP
	if captures {
		why = "capture" // the std path keeps the response body to read
	}
	switch {
	case why != "":
		return "net/http (" + why + ")"
	case req.URL.Scheme == "https" && req.HTTP2 && req.StreamsPerConnection > 1:
		return "lean client over TLS (HTTP/1.1 or HTTP/2 by ALPN, " +
			strconv.Itoa(req.StreamsPerConnection) + " streams per HTTP/2 connection)"
	case req.URL.Scheme == "https" && req.HTTP2:
		return "lean client over TLS (HTTP/1.1 or HTTP/2 by ALPN)"
	case req.URL.Scheme == "https":
		return "lean HTTP/1.1 client over TLS"
	}
	return "lean HTTP/1.1 client"
}

// invalidHost reports a name under .invalid, which RFC 6761 reserves to never
// resolve; the client answers it without asking a resolver.
func invalidHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "invalid" || strings.HasSuffix(host, ".invalid")
}

// dial opens a TCP connection to addr, failing at deadline (zero: no limit
// beyond ctx's).
func dial(ctx context.Context, addr string, deadline time.Time) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if invalidHost(host) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{
			Err: "no such host", Name: host, IsNotFound: true,
		}}
	}
	d := net.Dialer{Deadline: deadline}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil && outOfFiles(err) {
		// The next dial would fail as fast: wait before the worker tries
		// again, rather than spin through failed dials.
		backOff(ctx, deadline)
	}
	return c, err
}

// outOfFilesBackoff is how long a dial that found no free file descriptor
// waits before it returns (docs/measurement.md, "The generator's own limits").
const outOfFilesBackoff = 50 * time.Millisecond

// backOff waits outOfFilesBackoff, or until ctx ends or deadline passes.
func backOff(ctx context.Context, deadline time.Time) {
	wait := outOfFilesBackoff
	if !deadline.IsZero() {
		wait = min(wait, time.Until(deadline))
	}
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// connSet tracks the open connections of a client's Conns, so that
// the client's Close can release them.
type connSet[T comparable] struct {
	mu  sync.Mutex
	set map[T]struct{}
}

func (s *connSet[T]) add(c T) {
	s.mu.Lock()
	if s.set == nil {
		s.set = make(map[T]struct{})
	}
	s.set[c] = struct{}{}
	s.mu.Unlock()
}

func (s *connSet[T]) remove(c T) {
	s.mu.Lock()
	delete(s.set, c)
	s.mu.Unlock()
}

// drain empties the set and returns what it held.
func (s *connSet[T]) drain() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]T, 0, len(s.set))
	for c := range s.set {
		out = append(out, c)
	}
	clear(s.set)
	return out
}

// outcome is the outcome of an HTTP response with status code to req.
func outcome(req *plan.Request, code int) result.Outcome {
	if req.ValidCode(code) {
		return result.Success
	}
	return result.HTTPError
}

// scratch holds the buffers into which large bodies are read and dropped;
// a Conn takes one only while it reads past its read buffer.
var scratch = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}
