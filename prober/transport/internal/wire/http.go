package wire

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// MaxBodyBytes is how much of a response body an attempt reads. Beyond it the
// connection is closed instead of reading on: the status code is what counts,
// and a huge body would measure the generator's network more than the target.
const MaxBodyBytes = 10 << 20

// MaxHeaderBytes bounds the status lines and headers of one exchange,
// interim 1xx responses included: net/http's Transport's own default
// (MaxResponseHeaderBytes), which the std path keeps, so that both paths
// refuse the same responses.
const MaxHeaderBytes = 10 << 20

// Scratch holds the buffers into which large bodies are read and dropped;
// a Conn takes one only while it reads past its read buffer.
var Scratch = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// ErrTooLarge is the error of an attempt whose data or captured values
// would render its request above plan.MaxRequestBytes: it is not sent
// (docs/templates.md, "Templates").
var ErrTooLarge = fmt.Errorf("the request would render above %d bytes", plan.MaxRequestBytes)

// RequestTarget rewrites b[start:], a rendered request target (path and
// query, perhaps a fragment), as net/http writes the target of the same
// URL: url.Parse, then RequestURI. So a literal space, a byte outside ASCII
// or a backslash in the path is percent-encoded, the query is kept as it is
// and a fragment is left out, on both clients alike. A target made of bytes
// that net/http sends unchanged is kept without parsing, so that the common
// request allocates nothing.
func RequestTarget(b []byte, start int) ([]byte, error) {
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

// Outcome is the outcome of an HTTP response with status code to req.
func Outcome(req *plan.Request, code int) result.Outcome {
	if req.ValidCode(code) {
		return result.Success
	}
	return result.HTTPError
}

// FixedHeaders sets in fixed the headers of h that write a fixed text, and
// returns those that vary per attempt.
func FixedHeaders(h plan.Header, fixed http.Header) (varying []plan.Field) {
	for _, f := range h.Fields {
		if v, ok := f.Value.Literal(); ok {
			fixed.Set(f.Name, v)
		} else {
			varying = append(varying, f)
		}
	}
	return varying
}

// Render sets the headers that vary with v's values.
func Render(h http.Header, varying []plan.Field, v *template.Vars) {
	for _, f := range varying {
		h.Set(f.Name, string(f.Value.Append(nil, v)))
	}
}
