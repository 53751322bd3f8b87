package prober

import (
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/internal/h2"
	"github.com/loadprobe/loadprobe/result"
)

// HTTP/2 on the lean client. With enable_http2 (the default) an https
// connection offers "h2" and "http/1.1" by ALPN: when the server picks
// HTTP/1.1 the connection is the lean HTTP/1.1 client's, as with
// enable_http2 false; when it picks h2 it is handed to prober/internal/h2,
// and http2.streams_per_connection workers (consecutive Conns of the
// client) share it, each with a stream of its own. The request is written
// once as an HPACK block, the response read to its status and end, with
// the outcomes of the other paths (classify.go).

// h2Client is what a fastClient needs to speak HTTP/2.
type h2Client struct {
	opts    h2.Options
	streams int // Conns per connection
	shape   *h2Shape
	fixed   h2.Request // a request without templates, written once

	mu      sync.Mutex
	group   *h2Group // the group NewConn adds to
	members int
}

// h2Group is the connection that streams Conns share.
type h2Group struct {
	mu      sync.Mutex
	conn    *h2.Conn // nil until dialled, or once it can take no stream
	members int      // Conns not closed
}

func newH2Client(req *plan.Request) (*h2Client, error) {
	h := &h2Client{
		opts:    h2.Options{MaxBody: maxBodyBytes, MaxHeaderList: maxHeaderBytes, WriteTimeout: req.Timeout},
		streams: req.StreamsPerConnection,
		shape:   newH2Shape(req),
	}
	if !req.KeepAlive {
		h.streams = 1 // a connection per attempt
	}
	if !req.Templated {
		var fc fastConn
		fc.vars = template.NewVars(0)
		var err error
		if h.fixed, err = h.shape.render(&fc); err != nil {
			return nil, err
		}
		h.shape = nil
	}
	return h, nil
}

// join gives a new Conn its group: every streams Conns share one.
func (h *h2Client) join() *h2Group {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.group == nil || h.members >= h.streams {
		h.group, h.members = &h2Group{}, 0
	}
	h.members++
	h.group.mu.Lock()
	h.group.members++
	h.group.mu.Unlock()
	return h.group
}

// leave is a member's Close: the last one closes the connection.
func (g *h2Group) leave() {
	g.mu.Lock()
	g.members--
	var conn *h2.Conn
	if g.members == 0 {
		conn, g.conn = g.conn, nil
	}
	g.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// doH2 sends the attempt over HTTP/2, unless the server chose HTTP/1.1
// for the connection it opened (ok false): fc then holds that connection.
func (fc *fastConn) doH2(deadline time.Time) (code result.Code, o result.Outcome, ok bool) {
	h := fc.c.h2
	req := &h.fixed
	if h.shape != nil {
		req = &fc.h2req
		var err error
		if *req, err = h.shape.render(fc); err != nil {
			return result.Code{}, classify(err), true // unsent, as net/http would leave it
		}
	}
	for try := 0; ; try++ {
		conn, err := fc.h2Conn(deadline)
		if err != nil {
			return result.Code{}, classify(err), true
		}
		if conn == nil {
			return result.Code{}, 0, false
		}
		resp, err := conn.RoundTrip(req, deadline)
		if !fc.c.keepAlive {
			fc.group.drop(conn)
			conn.Close()
		}
		switch {
		case errors.Is(err, h2.ErrUnprocessed) && try == 0:
			continue // not sent, or not processed: once more, on a new connection
		case err != nil:
			return result.Code{}, classify(err), true
		}
		return result.HTTPStatus(resp.Status), outcome(fc.c.req, resp.Status), true
	}
}

// h2Conn returns the group's connection, dialling one when there is none
// that takes a stream; nil when the server chose HTTP/1.1 for the one
// dialled, which fc keeps.
func (fc *fastConn) h2Conn(deadline time.Time) (*h2.Conn, error) {
	g := fc.group
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn != nil && g.conn.Usable() {
		return g.conn, nil
	}
	g.conn = nil // a connection going away ends by itself: its streams finish first
	if err := fc.dial(deadline); err != nil {
		return nil, err
	}
	if tc, ok := fc.nc.(*tls.Conn); !ok || tc.ConnectionState().NegotiatedProtocol != "h2" {
		return nil, nil
	}
	nc, raw := fc.nc, fc.raw
	fc.nc, fc.raw = nil, nil
	conn, err := startH2(nc, raw, &fc.c.conns, fc.c.h2.opts, deadline)
	if err != nil {
		return nil, err
	}
	g.conn = conn
	return conn, nil
}

// startH2 runs the client side of HTTP/2 over nc (raw the TCP connection
// under it, which conns tracks), and lets conns forget raw once the
// connection has ended.
func startH2(nc, raw net.Conn, conns *connSet[net.Conn], opts h2.Options, deadline time.Time) (*h2.Conn, error) {
	conn, err := h2.New(nc, opts, deadline)
	if err != nil {
		conns.remove(raw)
		return nil, err
	}
	go func() {
		<-conn.Done()
		conns.remove(raw)
	}()
	return conn, nil
}

// drop forgets conn, if it is still the group's.
func (g *h2Group) drop(conn *h2.Conn) {
	g.mu.Lock()
	if g.conn == conn {
		g.conn = nil
	}
	g.mu.Unlock()
}

// h2Shape is the request as HTTP/2 fields: pseudo-header fields, then the
// headers net/http's HTTP/2 transport would send, names in lower case.
type h2Shape struct {
	fields    []plan.Field
	method    string
	body      *template.Template
	templated bool // the size bound applies (docs/templates.md, "Templates")
}

// h2PathField is the index of :path in an h2Shape's fields.
const h2PathField = 2

// connectionHeaders are HTTP/1.1's, which HTTP/2 forbids (RFC 9113, 8.2.2),
// and the framing, which is the client's.
var connectionHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding",
	"Upgrade", "Content-Length", "Trailer"}

func newH2Shape(req *plan.Request) *h2Shape {
	host := template.Text(strings.TrimSuffix(req.URL.Host, ":"))
	if req.Header.Host != nil {
		host = req.Header.Host
	}
	s := &h2Shape{method: req.Method, body: req.Body, templated: req.Templated, fields: []plan.Field{
		{Name: ":authority", Value: host}, {Name: ":method", Value: template.Text(req.Method)},
		{Name: ":path", Value: req.Target}, {Name: ":scheme", Value: template.Text("https")},
	}}
	for _, f := range req.Header.Fields {
		if !slices.Contains(connectionHeaders, f.Name) {
			s.fields = append(s.fields, plan.Field{Name: strings.ToLower(f.Name), Value: f.Value})
		}
	}
	return s
}

// render writes the next attempt's header block and body into fc's
// buffers; a Content-Length goes with a body, and with an empty one where
// net/http sends it. As on HTTP/1.1 (client_template.go), a request that
// would render above the templates' size bound is not sent (a literal one
// has body_file's), and a rendered :path is
// escaped as net/http escapes it; the error is that of a request net/http
// would not send either.
func (s *h2Shape) render(fc *fastConn) (h2.Request, error) {
	if s.templated {
		size := s.body.Size(fc.vars)
		for _, f := range s.fields {
			size += f.Value.Size(fc.vars)
		}
		if size > plan.MaxRequestBytes {
			return h2.Request{}, errTooLarge
		}
	}
	fc.body = s.body.Append(fc.body[:0], fc.vars)
	b := fc.buf[:0]
	for i, f := range s.fields {
		fc.value = f.Value.Append(fc.value[:0], fc.vars)
		if i == h2PathField {
			var err error
			if fc.value, err = requestTarget(fc.value, 0); err != nil {
				return h2.Request{}, err
			}
		}
		b = h2.AppendField(b, f.Name, fc.value)
	}
	if len(fc.body) > 0 || s.method == "POST" || s.method == "PUT" || s.method == "PATCH" {
		fc.value = strconv.AppendInt(fc.value[:0], int64(len(fc.body)), 10)
		b = h2.AppendField(b, "content-length", fc.value)
	}
	fc.buf = b
	return h2.Request{Header: b, Body: fc.body, Head: s.method == "HEAD"}, nil
}
