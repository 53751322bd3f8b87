package h1

import (
	"strconv"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// Templated requests (docs/templates.md, "Templates"). config compiles
// them at load; the lean client serializes what does not vary once, as
// for any request, and writes the rest per attempt into buffers its
// connection keeps.

// requestShape is a templated request on the lean client: its request
// line's method and target, its head after the target up to the framing,
// and its body.
type requestShape struct {
	method string // "GET "
	target *template.Template
	head   *template.Template
	length bool   // the request has a Content-Length
	tail   string // what follows Content-Length: Connection: close, the blank line
	body   *template.Template
}

// render writes the request of the next attempt into the connection's
// buffers, and returns it. It allocates only while the buffers grow, and
// for a target that net/http would escape (requestTarget). The error is
// that of a target that net/http would not send either.
func (s *requestShape) render(fc *conn) ([]byte, error) {
	if s.target.Size(fc.vars)+s.head.Size(fc.vars)+s.body.Size(fc.vars) > plan.MaxRequestBytes {
		return nil, wire.ErrTooLarge
	}
	fc.body = s.body.Append(fc.body[:0], fc.vars)
	b := append(fc.buf[:0], s.method...)
	b, err := wire.RequestTarget(s.target.Append(b, fc.vars), len(s.method))
	if err != nil {
		return nil, err
	}
	b = s.head.Append(b, fc.vars)
	if s.length {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(fc.body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, s.tail...)
	b = append(b, fc.body...)
	fc.buf = b
	return b, nil
}

// message writes a script's message (docs/scripts.md) into the
// connection's buffer, framed as serializeRequest frames a request, and
// returns it.
func (c *Client) message(fc *conn, m *plan.Message) ([]byte, error) {
	if m.Size() > plan.MaxRequestBytes {
		return nil, wire.ErrTooLarge
	}
	b := append(append(fc.buf[:0], m.Method...), ' ')
	b, err := wire.RequestTarget(append(b, m.Target...), len(m.Method)+1)
	if err != nil {
		return nil, err
	}
	host := c.host
	for _, f := range m.Header {
		if f.Name == "Host" {
			host = f.Value
		}
	}
	b = append(append(append(b, " HTTP/1.1\r\nHost: "...), host...), "\r\n"...)
	for _, f := range m.Header {
		if f.Name != "Host" && !framing(f.Name, c.keepAlive) {
			b = append(append(append(append(b, f.Name...), ": "...), f.Value...), "\r\n"...)
		}
	}
	if hasLength(m.Method, len(m.Body) > 0) {
		b = strconv.AppendInt(append(b, "Content-Length: "...), int64(len(m.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(append(b, tail(c.keepAlive)...), m.Body...)
	fc.buf = b
	return b, nil
}
