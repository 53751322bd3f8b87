package h1

import (
	"bufio"
	"bytes"
	"net/http"
	"net/textproto"
	"slices"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// kept is what a flow's capturing step keeps of a response while the
// reader reads it as it reads any other: the final response's header
// lines and its body, up to wire.MaxBodyBytes. Its buffers are the
// connection's, reused from one attempt to the next.
type kept struct {
	head []byte // header lines, each ending in CRLF, as they came
	body []byte
	// How the final response was framed: in chunks, and its length (-1:
	// to its end).
	chunked bool
	length  int64
}

// DoCapture is Do for a flow step that captures values or a request with
// a script (wire.Capturer): it sends m when m is not nil, and read reads
// every response's headers and body.
func (fc *conn) DoCapture(deadline time.Time, m *plan.Message, read wire.Read) (result.Code, result.Outcome) {
	if fc.kept == nil {
		fc.kept = &kept{}
	}
	fc.keep = fc.kept
	defer func() { fc.keep = nil }()
	code, o := fc.do(deadline, m)
	if !o.Responded() {
		return code, o
	}
	header, err := fc.kept.header()
	if err != nil {
		return code, result.HTTPError
	}
	return code, read(o, int(code.Number), header, fc.kept.body)
}

// header is the final response's header as net/http's Response.Header has
// it. The reader has checked the lines as net/http does; textproto reads
// them as net/http does.
func (k *kept) header() (http.Header, error) {
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(k.head, "\r\n"...))))
	h, err := r.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	k.asNetHTTP(http.Header(h))
	return http.Header(h), nil
}

// start empties k for the next response: an interim one's headers are not
// the final one's.
func (k *kept) start() {
	if k != nil {
		k.head, k.body = k.head[:0], k.body[:0]
	}
}

// headerPiece keeps a header line, or a piece of one when it is longer
// than the read buffer (more follows).
func (k *kept) headerPiece(line []byte, more bool) {
	if k == nil {
		return
	}
	k.head = append(k.head, line...)
	if !more {
		k.head = append(k.head, "\r\n"...)
	}
}

// framed notes how the final response is framed, and makes room for a body
// of a known length at once, rather than in buffers that grow to twice its
// size.
func (k *kept) framed(chunked bool, length int64) {
	if k == nil {
		return
	}
	k.chunked, k.length = chunked, length
	if length > 0 {
		k.body = slices.Grow(k.body, int(min(length, wire.MaxBodyBytes)))
	}
}

// asNetHTTP leaves out of h what net/http's Response.Header leaves out:
// the framing it has read (Transfer-Encoding, and with chunks, Trailer and
// a body's Content-Length), and the repeats of one Content-Length.
func (k *kept) asNetHTTP(h http.Header) {
	delete(h, "Transfer-Encoding")
	if cl := h["Content-Length"]; len(cl) > 1 {
		h["Content-Length"] = []string{textproto.TrimString(cl[0])}
	}
	if k.chunked {
		delete(h, "Trailer")
		if k.length < 0 {
			delete(h, "Content-Length")
		}
	}
}

// bodyPiece keeps b, up to the body limit.
func (k *kept) bodyPiece(b []byte) {
	if k != nil {
		k.body = append(k.body, b[:min(len(b), wire.MaxBodyBytes-len(k.body))]...)
	}
}
