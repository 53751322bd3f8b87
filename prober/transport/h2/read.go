package h2

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"time"

	"golang.org/x/net/http2"
)

// The reader goroutine: frames are read in place in the read buffer, which
// holds any frame of the size the client allows (SETTINGS_MAX_FRAME_SIZE),
// and each is handled before the next is read. The frame-level checks are
// golang.org/x/net/http2's Framer's, and what a malformed frame ends (a
// stream or the connection) is what its transport ends.

const (
	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

type reader struct {
	c    *Conn
	dec  *decoder
	emit fieldFunc // reader.field, bound once

	// A header block that CONTINUATION frames are still adding to.
	continuing bool
	block      []byte
	blockID    uint32
	blockEnd   bool // its HEADERS frame ended the stream
	dropBlock  bool // its HEADERS frame was malformed: the block is not read

	received  int64 // connection window used since the last update
	holding   bool  // Conn.readerFlushes is set
	unflushed bool  // queue wrote frames that are not flushed yet
	fields    fieldState
}

func (r *reader) init(c *Conn) {
	r.c = c
	r.dec = newDecoder(c.opts.MaxHeaderList)
	r.emit = r.field
}

func (c *Conn) readLoop() {
	defer close(c.done)
	err := c.readFrames()
	c.mu.Lock()
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = io.ErrUnexpectedEOF
		if c.goAway != nil {
			err = *c.goAway
		}
	}
	c.mu.Unlock()
	if ce, ok := err.(ConnectionError); ok {
		c.control(func(fr *http2.Framer) error {
			return fr.WriteGoAway(0, http2.ErrCode(ce), nil)
		})
	}
	c.fail(err)
}

func (c *Conn) readFrames() error {
	r := &c.reader
	for {
		r.flushBefore(9)
		h, err := c.br.Peek(9)
		if err != nil {
			return r.cut(err)
		}
		r.hold()
		length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags := http2.FrameType(h[3]), h[4]
		id := binary.BigEndian.Uint32(h[5:]) & maxStreamID
		// The Framer's order: the size, the order of header frames, and
		// then the payload.
		if length > maxFrame {
			return r.cut(ConnectionError(http2.ErrCodeFrameSize))
		}
		switch {
		case r.continuing && (typ != http2.FrameContinuation || id != r.blockID),
			!r.continuing && typ == http2.FrameContinuation:
			return r.cut(ConnectionError(http2.ErrCodeProtocol))
		case typ == http2.FrameHeaders && flags&flagEndHeaders == 0:
			// CONTINUATION frames follow, whatever the frame turns out to
			// hold; one whose fragment cannot be read drops theirs.
			r.continuing, r.blockID, r.blockEnd = true, id, flags&flagEndStream != 0
			r.block, r.dropBlock = r.block[:0], true
		}
		r.flushBefore(9 + length)
		frame, err := c.br.Peek(9 + length)
		if err != nil {
			return r.cut(unexpectedEOF(err))
		}
		err = r.frame(typ, flags, id, frame[9:])
		c.br.Discard(9 + length)
		if err != nil {
			return err
		}
	}
}

// The reader flushes its own frames, and on a plain TCP connection the
// callers' requests too, in one write before it waits for the server
// again, as h2load writes once for all it has read: while the reader
// reads what it has received, the callers it wakes write their next
// requests into the buffer and leave them there. Over TLS the callers
// flush their own (Conn.flush): a read returns one TLS record, so an
// empty read buffer does not say that the next read waits, and flushing
// at each record sent nginx one request at a time.

// hold has the callers leave their writes to the reader, on a plain TCP
// connection with more than one stream open: with one, there is nothing
// to gather, and its caller writes at once.
func (r *reader) hold() {
	c := r.c
	if !c.plain || r.holding {
		return
	}
	c.mu.Lock()
	shared := c.active > 1
	c.mu.Unlock()
	if shared {
		r.holding = true
		c.wmu.Lock()
		c.readerFlushes = true
		c.wmu.Unlock()
	}
}

// queue writes a frame of the connection's own for the reader to flush.
func (r *reader) queue(write func(fr *http2.Framer) error) {
	if err := r.c.writeControl(write, false); err != nil {
		r.c.fail(err)
		return
	}
	r.unflushed = true
}

// flushBefore flushes what the reader is to flush when fewer than n bytes
// are left to read in the read buffer: reading them may wait for the
// server. It first lets the callers it has woken run, so that their
// requests go in the same write.
func (r *reader) flushBefore(n int) {
	c := r.c
	if !r.holding && !r.unflushed || c.br.Buffered() >= n {
		return
	}
	r.holding, r.unflushed = false, false
	runtime.Gosched()
	c.wmu.Lock()
	c.readerFlushes = false
	var err error
	if c.bw.Buffered() > 0 {
		c.writeBy(time.Now().Add(c.opts.WriteTimeout))
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
	}
}

// cut is the end of the frames by err. A header block cut short by it is
// decoded as far as it goes first: golang.org/x/net/http2 decodes each
// fragment as it comes, so that an invalid one ends the connection as a
// compression error whatever comes next.
func (r *reader) cut(err error) error {
	if r.continuing && !r.dropBlock {
		r.continuing = false
		r.fields = fieldState{} // no stream: the fields are only decoded
		if e := r.dec.decode(r.block, r.emit); e != nil && e != errTruncated {
			return ConnectionError(http2.ErrCodeCompression)
		}
	}
	return err
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (r *reader) frame(typ http2.FrameType, flags byte, id uint32, p []byte) error {
	switch typ {
	case http2.FrameData:
		return r.data(flags, id, p)
	case http2.FrameHeaders:
		return r.headers(flags, id, p)
	case http2.FrameContinuation:
		return r.continuation(flags, id, p)
	case http2.FramePriority:
		switch {
		case id == 0:
			return ConnectionError(http2.ErrCodeProtocol)
		case len(p) != 5:
			return ConnectionError(http2.ErrCodeFrameSize)
		}
		return nil
	case http2.FrameRSTStream:
		return r.rstStream(id, p)
	case http2.FrameSettings:
		return r.settings(flags, id, p)
	case http2.FramePushPromise:
		return pushPromise(flags, id, p)
	case http2.FramePing:
		return r.ping(flags, id, p)
	case http2.FrameGoAway:
		return r.goAway(id, p)
	case http2.FrameWindowUpdate:
		return r.windowUpdate(id, p)
	case http2.FramePriorityUpdate: // RFC 9218, checked as the Framer checks it, then ignored
		switch {
		case id != 0:
			return ConnectionError(http2.ErrCodeProtocol)
		case len(p) < 4:
			return ConnectionError(http2.ErrCodeFrameSize)
		case binary.BigEndian.Uint32(p)&maxStreamID == 0:
			return ConnectionError(http2.ErrCodeProtocol)
		}
	}
	return nil // unknown frame types are ignored (RFC 9113, 4.1)
}

// pushPromise refuses a PUSH_PROMISE: the client disabled push.
func pushPromise(flags byte, id uint32, p []byte) error {
	if id == 0 {
		return ConnectionError(http2.ErrCodeProtocol)
	}
	p, _, err := padding(flags, p)
	if err == nil && len(p) < 4 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	return ConnectionError(http2.ErrCodeProtocol)
}

// padding reads a padded frame's pad length; a frame too short for it is
// a cut one, as golang.org/x/net/http2's Framer reads it.
func padding(flags byte, p []byte) ([]byte, int, error) {
	if flags&flagPadded == 0 {
		return p, 0, nil
	}
	if len(p) == 0 {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return p[1:], int(p[0]), nil
}

func (r *reader) data(flags byte, id uint32, p []byte) error {
	c := r.c
	if id == 0 {
		return ConnectionError(http2.ErrCodeProtocol)
	}
	size := len(p)
	body, pad, err := padding(flags, p)
	switch {
	case err != nil:
		return err
	case pad > len(body):
		return ConnectionError(http2.ErrCodeProtocol)
	}
	body = body[:len(body)-pad]
	if err := r.refund(size); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[id]
	if s == nil {
		if id >= c.nextID {
			return ConnectionError(http2.ErrCodeProtocol) // never asked for
		}
		return nil // a stream the client gave up
	}
	switch {
	case !s.gotHead:
		r.resetLocked(s, http2.ErrCodeProtocol, errDataBeforeHeader)
		return nil
	case s.head && len(body) > 0:
		r.resetLocked(s, http2.ErrCodeProtocol, nil)
		return nil
	}
	if n := min(len(body), cap(s.keep)-len(s.keep)); n > 0 {
		s.keep = append(s.keep, body[:n]...)
		s.resp.Body = s.keep
	}
	s.resp.BodyLen += int64(len(body))
	switch {
	case s.declared >= 0 && s.resp.BodyLen > s.declared:
		r.endWith(s, http2.ErrCodeCancel, errBodyTooLong)
	case s.resp.BodyLen > c.opts.MaxBody:
		s.resp.BodyLen = c.opts.MaxBody
		s.resp.Truncated = true
		r.endWith(s, http2.ErrCodeCancel, nil) // the response counts by its status
	case flags&flagEndStream != 0:
		r.endLocked(s)
	}
	return nil
}

// refund counts n bytes of the connection's receive window as read, and
// tops the window up when half of it is used.
func (r *reader) refund(n int) error {
	r.received += int64(n)
	if r.received > connWindow {
		return ConnectionError(http2.ErrCodeFlowControl)
	}
	if r.received < connWindow/2 {
		return nil
	}
	incr := uint32(r.received)
	r.received = 0
	r.queue(func(fr *http2.Framer) error { return fr.WriteWindowUpdate(0, incr) })
	return nil
}

// endLocked ends a stream whose response is complete: a short body is a
// cut stream, as net/http reads it.
func (r *reader) endLocked(s *stream) {
	var err error
	if s.declared > 0 && s.resp.BodyLen < s.declared {
		err = io.ErrUnexpectedEOF
	}
	r.c.finishLocked(s, err)
}

// resetLocked ends s with a stream error of the client's and tells the
// server, whose writes to the stream would otherwise go on.
func (r *reader) resetLocked(s *stream, code http2.ErrCode, cause error) {
	r.endWith(s, code, StreamError{StreamID: s.id, Code: code, Cause: cause})
}

// endWith ends s with err, resetting its stream with code.
func (r *reader) endWith(s *stream, code http2.ErrCode, err error) {
	id := s.id
	r.c.finishLocked(s, err)
	// The write takes the write lock: not under mu, which writers take.
	r.c.mu.Unlock()
	r.queue(func(fr *http2.Framer) error { return fr.WriteRSTStream(id, code) })
	r.c.mu.Lock()
}

func (r *reader) rstStream(id uint32, p []byte) error {
	switch {
	case len(p) != 4:
		return ConnectionError(http2.ErrCodeFrameSize)
	case id == 0:
		return ConnectionError(http2.ErrCodeProtocol)
	}
	code := http2.ErrCode(binary.BigEndian.Uint32(p))
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.streams[id]; s != nil {
		var err error = StreamError{StreamID: id, Code: code, FromPeer: true}
		if code == http2.ErrCodeRefusedStream {
			err = ErrUnprocessed
		}
		c.finishLocked(s, err)
	}
	return nil
}

func (r *reader) ping(flags byte, id uint32, p []byte) error {
	switch {
	case len(p) != 8:
		return ConnectionError(http2.ErrCodeFrameSize)
	case id != 0:
		return ConnectionError(http2.ErrCodeProtocol)
	case flags&flagAck != 0:
		return nil
	}
	data := [8]byte(p)
	r.queue(func(fr *http2.Framer) error { return fr.WritePing(true, data) })
	return nil
}

func (r *reader) goAway(id uint32, p []byte) error {
	switch {
	case id != 0:
		return ConnectionError(http2.ErrCodeProtocol)
	case len(p) < 8:
		return ConnectionError(http2.ErrCodeFrameSize)
	}
	last := binary.BigEndian.Uint32(p) & maxStreamID
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	code := http2.ErrCode(binary.BigEndian.Uint32(p[4:]))
	if c.goAway != nil && c.goAway.Code != http2.ErrCodeNo {
		code = c.goAway.Code // the first error stands
	}
	c.goAway = &GoAwayError{LastStreamID: last, Code: code}
	for sid, s := range c.streams {
		switch {
		case sid <= last: // the server has it, and answers or closes
		case sid == 1 && code != http2.ErrCodeNo:
			// An error on the first stream of a new connection: a new
			// one would likely see the same, so no retry, as in x/net.
			c.finishLocked(s, fmt.Errorf("http2: Transport received GOAWAY from server ErrCode:%v", code))
		default:
			c.finishLocked(s, ErrUnprocessed)
		}
	}
	c.closeIfGoneLocked()
	return nil
}
