package h2

import (
	"bytes"
	"io"
	"math"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
)

// Response headers: decoded for every stream (the HPACK state is the
// connection's), checked as golang.org/x/net/http2 checks them, and kept
// only for what the client reads: the status and the Content-Length.

// fieldState is what the header block being decoded said so far.
type fieldState struct {
	trailer    bool
	sawRegular bool
	sawStatus  bool
	pseudo     bool // a pseudo-header field (any, trailers' concern)
	status     int
	statusBad  bool
	invalid    error
	size       int // the header list's size so far
	truncated  bool
	lengths    int
	length     int64
	lengthBad  bool
	first      [20]byte // the first Content-Length, to compare the others to
	firstLen   int
	grpc       GRPC // the block's gRPC fields
}

func (r *reader) headers(flags byte, id uint32, p []byte) error {
	if id == 0 {
		return ConnectionError(http2.ErrCodeProtocol)
	}
	p, pad, err := padding(flags, p)
	if err != nil {
		return err
	}
	if flags&flagPriority != 0 {
		if len(p) < 5 {
			return io.ErrUnexpectedEOF
		}
		p = p[5:]
	}
	if pad > len(p) {
		r.streamError(id)
		return nil
	}
	p = p[:len(p)-pad]
	if r.continuing {
		r.block, r.dropBlock = append(r.block, p...), false
		return nil
	}
	return r.endBlock(id, flags&flagEndStream != 0, p)
}

// continuation adds to the block readFrames found continued.
func (r *reader) continuation(flags byte, id uint32, p []byte) error {
	// The block may not grow past what its header list may hold, by far.
	if len(r.block)+len(p) > 2*r.c.opts.MaxHeaderList+maxFrame {
		return ConnectionError(http2.ErrCodeProtocol)
	}
	if !r.dropBlock {
		r.block = append(r.block, p...)
	}
	if flags&flagEndHeaders == 0 {
		return nil
	}
	r.continuing = false
	if r.dropBlock {
		r.shrink()
		return nil
	}
	return r.endBlock(id, r.blockEnd, r.block)
}

// keptBuffer is the most a connection's reader keeps of a buffer a header
// block grew, between blocks: a usual block is a few hundred bytes, and a
// hostile server's, up to the header list's bound, would otherwise be
// held for the connection's life (~35 MB each, 2.2 GB at 64 connections).
const keptBuffer = 64 << 10

// shrink lets go of the buffers the last header block grew past
// keptBuffer.
func (r *reader) shrink() {
	if cap(r.block) > keptBuffer {
		r.block = nil
	}
	r.dec.shrink()
}

// streamError resets a stream for a malformed frame of its own.
func (r *reader) streamError(id uint32) {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.streams[id]; s != nil {
		r.resetLocked(s, http2.ErrCodeProtocol, nil)
	}
}

// endBlock decodes a complete header block and ends, or goes on with, its
// stream.
func (r *reader) endBlock(id uint32, end bool, block []byte) error {
	defer r.shrink()
	c := r.c
	c.mu.Lock()
	s := c.streams[id]
	r.fields = fieldState{trailer: s != nil && s.gotHead}
	c.mu.Unlock()
	if err := r.dec.decode(block, r.emit); err != nil {
		return ConnectionError(http2.ErrCodeCompression)
	}
	if s == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams[id] != s {
		// It ended while the block was decoded (its deadline passed), and
		// its stream may already carry another request: the block is not
		// that request's answer.
		return nil
	}
	f := &r.fields
	if f.invalid != nil {
		r.resetLocked(s, http2.ErrCodeProtocol, f.invalid)
		return nil
	}
	if f.trailer {
		if !end || f.pseudo {
			return ConnectionError(http2.ErrCodeProtocol)
		}
		s.resp.Trailers = true
		f.endGRPC(s)
		r.endLocked(s)
		return nil
	}
	return r.responseLocked(s, end)
}

// responseLocked takes a response's (or a 1xx response's) headers.
func (r *reader) responseLocked(s *stream, end bool) error {
	f := &r.fields
	var bad error
	switch {
	case f.truncated:
		bad = errHeaderListSize
	case !f.sawStatus:
		bad = errMissingStatus
	case f.statusBad:
		bad = errMalformedStatus
	case f.status >= 100 && f.status <= 199 && end:
		bad = errInterimEnd
	case f.status >= 100 && f.status <= 199:
		s.interim += int64(f.size)
		if s.interim > int64(r.c.opts.MaxHeaderList) {
			bad = errInterimTooLarge
		}
	}
	switch {
	case bad != nil:
		r.resetLocked(s, http2.ErrCodeProtocol, bad)
		return nil
	case f.status >= 100 && f.status <= 199:
		return nil // the final response follows
	}
	s.gotHead = true
	s.resp.Status = f.status
	s.resp.GRPC.ContentType, s.resp.GRPC.Encoded = f.grpc.ContentType, f.grpc.Encoded
	if f.lengths > 0 && !f.lengthBad && !s.head {
		s.declared = f.length
	}
	if end {
		f.endGRPC(s)
		r.endLocked(s)
	}
	return nil
}

// field checks one field as golang.org/x/net/http2's Framer does, and
// keeps what the client reads of it.
func (r *reader) field(name, value []byte) error {
	f := &r.fields
	defer func() { r.dec.quiet = f.invalid != nil || f.truncated }()
	if f.invalid != nil || f.truncated {
		return nil
	}
	if !validValue(value) {
		f.invalid = errInvalidField
		return nil
	}
	size := len(name) + len(value) + 32
	if len(name) > 0 && name[0] == ':' {
		if f.sawRegular {
			f.invalid = errPseudoField
			return nil
		}
		if string(name) != ":status" || f.sawStatus {
			f.invalid = errPseudoField
			return nil
		}
		f.pseudo, f.sawStatus = true, true
		f.status, f.statusBad = atoi(value)
	} else {
		f.sawRegular = true
		if !validName(name) {
			f.invalid = errInvalidField
			return nil
		}
		switch string(name) {
		case "content-length":
			f.contentLength(value)
		case "content-type":
			f.grpc.ContentType = grpcContentType(value)
		case "grpc-encoding":
			f.grpc.Encoded = len(value) > 0 && string(value) != "identity"
		case "grpc-status":
			n, bad := atoi(value)
			f.grpc.HasStatus = !bad && n >= 0 && int64(n) <= math.MaxUint32
			f.grpc.Status = uint32(n)
		}
	}
	if f.size+size > r.c.opts.MaxHeaderList {
		f.truncated = true
		return nil
	}
	f.size += size
	return nil
}

// endGRPC gives s the grpc-status of the block that ends its stream, as
// grpc-go reads a call's status only there.
func (f *fieldState) endGRPC(s *stream) {
	s.resp.GRPC.EndedByFields = true
	s.resp.GRPC.HasStatus, s.resp.GRPC.Status = f.grpc.HasStatus, f.grpc.Status
}

// grpcContentType reports application/grpc, alone or with a subtype
// (application/grpc+proto, application/grpc;…), as grpc-go accepts it.
func grpcContentType(v []byte) bool {
	const base = "application/grpc"
	if len(v) < len(base) || string(v[:len(base)]) != base {
		return false
	}
	return len(v) == len(base) || v[len(base)] == '+' || v[len(base)] == ';'
}

// contentLength takes a Content-Length: identical repeats collapse into
// one; a bad or conflicting one is no length, as net/http reads it.
func (f *fieldState) contentLength(v []byte) {
	f.lengths++
	if f.lengths == 1 {
		f.length, f.lengthBad = parseLength(v)
		f.firstLen = copy(f.first[:], v)
		if f.firstLen < len(v) {
			f.lengthBad = true
		}
		return
	}
	if !bytes.Equal(v, f.first[:f.firstLen]) {
		f.lengthBad = true
	}
}

// validName reports a field name golang.org/x/net/http2 accepts on the
// wire: token characters, no upper case.
func validName(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, b := range name {
		if b >= 0x80 || !httpguts.IsTokenRune(rune(b)) || 'A' <= b && b <= 'Z' {
			return false
		}
	}
	return true
}

// validValue is httpguts.ValidHeaderFieldValue on bytes: no control
// character but the tab.
func validValue(v []byte) bool {
	for _, b := range v {
		if (b < ' ' || b == 0x7f) && b != '\t' {
			return false
		}
	}
	return true
}

// atoi parses a status as strconv.Atoi does.
func atoi(v []byte) (n int, bad bool) {
	s := v
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, true
	}
	for _, b := range s {
		if b < '0' || b > '9' {
			return 0, true
		}
		n = n*10 + int(b-'0')
	}
	if v[0] == '-' {
		n = -n
	}
	return n, false
}

// parseLength parses a Content-Length as strconv.ParseUint(v, 10, 63).
func parseLength(v []byte) (n int64, bad bool) {
	if len(v) == 0 {
		return 0, true
	}
	for _, b := range v {
		if b < '0' || b > '9' || n > (1<<63-1-int64(b-'0'))/10 {
			return 0, true
		}
		n = n*10 + int64(b-'0')
	}
	return n, false
}
