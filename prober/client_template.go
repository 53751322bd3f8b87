package prober

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
)

// Templated requests (docs/templates.md, "Templates"). config
// compiles them at load; the client serializes what does not vary once, as
// for any request, and writes the rest per attempt: on the lean client into
// buffers its connection keeps, on net/http into a copy of the request, on
// a WebSocket session into the message (and at each handshake, its URL and
// headers).

// varSource gives the attempts (or iterations) of a run their values: the
// next index, and the next row of the probe's data.
type varSource struct {
	next atomic.Uint64
	rows *template.Rows // nil without data
}

func newVarSource(p *plan.Probe) *varSource {
	s := &varSource{}
	if r := p.Rows; r != nil && r.Table.Len() > 0 {
		s.rows = template.NewRows(r.Table, r.Random)
	}
	return s
}

func (s *varSource) index(v *template.Vars) { v.Index = s.next.Add(1) }

func (s *varSource) row(v *template.Vars) {
	if s.rows != nil {
		v.Row = s.rows.Take()
	}
}

// attempt gives v the values of a plain probe's next attempt, which is an
// iteration of its own.
func (s *varSource) attempt(v *template.Vars) {
	s.index(v)
	s.row(v)
}

// errTooLarge is the error of an attempt whose data or captured values
// would render its request above plan.MaxRequestBytes: it is not sent
// (docs/templates.md, "Templates").
var errTooLarge = fmt.Errorf("the request would render above %d bytes", plan.MaxRequestBytes)

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
func (s *requestShape) render(fc *fastConn) ([]byte, error) {
	if s.target.Size(fc.vars)+s.head.Size(fc.vars)+s.body.Size(fc.vars) > plan.MaxRequestBytes {
		return nil, errTooLarge
	}
	fc.body = s.body.Append(fc.body[:0], fc.vars)
	b := append(fc.buf[:0], s.method...)
	b, err := requestTarget(s.target.Append(b, fc.vars), len(s.method))
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

// requestTarget rewrites b[start:], a rendered request target (path and
// query, perhaps a fragment), as net/http writes the target of the same
// URL: url.Parse, then RequestURI. So a literal space, a byte outside ASCII
// or a backslash in the path is percent-encoded, the query is kept as it is
// and a fragment is left out, on both clients alike. A target made of bytes
// that net/http sends unchanged is kept without parsing, so that the common
// request allocates nothing.
func requestTarget(b []byte, start int) ([]byte, error) {
	if !slices.ContainsFunc(b[start:], needsParse) {
		return b, nil
	}
	u, err := url.Parse("http://h" + string(b[start:]))
	if err != nil {
		return nil, err
	}
	return append(b[:start], u.RequestURI()...), nil
}

// needsParse reports a byte of a request target that url.Parse and
// RequestURI may change or reject: anything but the unreserved characters,
// the sub-delimiters, ':', '@', '/' and '?'.
func needsParse(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return false
	}
	return !strings.ContainsRune("-._~!$&'()*+,;=:@/?", rune(c))
}

// templated writes the varying parts of req (a copy of the client's) for
// the next attempt on net/http, and returns its body.
func (c *stdClient) templated(req *http.Request, v *template.Vars) ([]byte, error) {
	if c.req.Size(v) > plan.MaxRequestBytes {
		return nil, errTooLarge
	}
	u, err := url.Parse(string(c.req.Whole.Append(nil, v)))
	if err != nil {
		return nil, err
	}
	req.URL = u
	render(req.Header, c.varying, v)
	return c.req.Body.Append(nil, v), nil
}
