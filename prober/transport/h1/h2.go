package h1

import (
	"crypto/tls"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/h2"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// HTTP/2 on the lean client. With enable_http2 (the default) an https
// connection offers "h2" and "http/1.1" by ALPN: when the server picks
// HTTP/1.1 the connection is the lean HTTP/1.1 client's, as with
// enable_http2 false; when it picks h2 it is handed to package h2, and
// http2.streams_per_connection users (consecutive Conns of the client)
// share it in an h2.Pool, each with a stream of its own. The request is
// written once as an HPACK block, the response read to its status and
// end, with the outcomes of the other paths (wire.Classify).

// h2Client is what a Client needs to speak HTTP/2.
type h2Client struct {
	opts  h2.Options
	pool  *h2.Pool // http2.streams_per_connection Conns share a connection
	shape *h2Shape
	fixed h2.Request // a request without templates, written once
}

func newH2Client(req *plan.Request) (*h2Client, error) {
	streams := req.StreamsPerConnection
	if !req.KeepAlive {
		streams = 1 // a connection per attempt
	}
	h := &h2Client{
		opts:  h2.Options{MaxBody: wire.MaxBodyBytes, MaxHeaderList: wire.MaxHeaderBytes, WriteTimeout: req.Timeout},
		pool:  h2.NewPool(streams, 0),
		shape: newH2Shape(req),
	}
	if !req.Templated {
		var fc conn
		fc.vars = template.NewVars(0)
		var err error
		if h.fixed, err = h.shape.render(&fc); err != nil {
			return nil, err
		}
		h.shape = nil
	}
	return h, nil
}

// doH2 sends the attempt over HTTP/2, unless the server chose HTTP/1.1
// for the connection it opened (ok false): fc then holds that connection.
func (fc *conn) doH2(deadline time.Time) (code result.Code, o result.Outcome, ok bool) {
	h := fc.c.h2
	req := &h.fixed
	if h.shape != nil {
		req = &fc.h2req
		var err error
		if *req, err = h.shape.render(fc); err != nil {
			return result.Code{}, wire.Classify(err), true // unsent, as net/http would leave it
		}
	}
	for try := 0; ; try++ {
		conn, err := fc.h2Conn(deadline)
		if err != nil {
			return result.Code{}, wire.Classify(err), true
		}
		if conn == nil {
			return result.Code{}, 0, false
		}
		resp, err := conn.RoundTrip(req, deadline)
		if !fc.c.keepAlive {
			fc.group.Drop(conn)
			conn.Close()
		}
		switch {
		case errors.Is(err, h2.ErrUnprocessed) && try == 0:
			continue // not sent, or not processed: once more, on a new connection
		case err != nil:
			return result.Code{}, wire.Classify(err), true
		}
		return result.HTTPStatus(resp.Status), wire.Outcome(fc.c.req, resp.Status), true
	}
}

// h2Conn returns the group's connection, dialling one when there is none
// that takes a stream; nil when the server chose HTTP/1.1 for the one
// dialled, which fc keeps.
func (fc *conn) h2Conn(deadline time.Time) (*h2.Conn, error) {
	return fc.group.Get(func() (*h2.Conn, error) {
		if err := fc.dial(deadline); err != nil {
			return nil, err
		}
		if tc, ok := fc.nc.(*tls.Conn); !ok || tc.ConnectionState().NegotiatedProtocol != "h2" {
			return nil, nil
		}
		nc, raw := fc.nc, fc.raw
		fc.nc, fc.raw = nil, nil
		return h2.Start(nc, raw, &fc.c.conns, fc.c.h2.opts, deadline)
	})
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
// net/http sends it. As on HTTP/1.1 (template.go), a request that
// would render above the templates' size bound is not sent (a literal one
// has body_file's), and a rendered :path is
// escaped as net/http escapes it; the error is that of a request net/http
// would not send either.
func (s *h2Shape) render(fc *conn) (h2.Request, error) {
	if s.templated {
		size := s.body.Size(fc.vars)
		for _, f := range s.fields {
			size += f.Value.Size(fc.vars)
		}
		if size > plan.MaxRequestBytes {
			return h2.Request{}, wire.ErrTooLarge
		}
	}
	fc.body = s.body.Append(fc.body[:0], fc.vars)
	b := fc.buf[:0]
	for i, f := range s.fields {
		fc.value = f.Value.Append(fc.value[:0], fc.vars)
		if i == h2PathField {
			var err error
			if fc.value, err = wire.RequestTarget(fc.value, 0); err != nil {
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
