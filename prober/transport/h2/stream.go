package h2

import (
	"os"
	"runtime"
	"time"

	"golang.org/x/net/http2"
)

// Request is what one stream sends.
type Request struct {
	// Header is the header block, pseudo-header fields first, written with
	// AppendField.
	Header []byte
	Body   []byte
	// Head says the response has no body whatever its headers say.
	Head bool
	// Keep, when its capacity is not 0, receives the start of the response
	// body, up to that capacity (the rest is only counted). A Request with
	// Keep is one caller's: the connection's reader writes into it.
	Keep []byte
}

// Response is what came back on a stream.
type Response struct {
	Status   int
	BodyLen  int64 // bytes of body read, up to Options.MaxBody
	Trailers bool
	// Truncated says the body went past Options.MaxBody, so the stream was
	// reset instead of read on.
	Truncated bool
	// Body is the start of the body, in the Request's Keep.
	Body []byte
	// GRPC is what a gRPC call reads of the response's fields.
	GRPC GRPC
}

// GRPC is what the response's fields say of a gRPC call (gRPC over
// HTTP/2): whether the headers name gRPC's content type, and the status
// of the header block that ended the stream, the trailers or the headers
// alone.
type GRPC struct {
	ContentType   bool // application/grpc, or a subtype of it
	Encoded       bool // the headers name a grpc-encoding other than identity
	EndedByFields bool // the stream ended with a header block
	HasStatus     bool // that block had a grpc-status that is a number
	Status        uint32
}

// stream is one request under way; a Conn keeps ended ones for reuse, with
// their channels and timer.
type stream struct {
	id         uint32
	done       chan struct{} // the stream ended: resp and err hold
	window     chan struct{} // the send window grew, or the stream ended
	deadline   time.Time     // under Conn.mu, while open (expire.go)
	timer      *time.Timer   // the deadline of a wait for a slot
	waiting    bool          // timer is set
	sendWindow int64         // under Conn.mu
	open       bool          // in Conn.streams, under Conn.mu
	head       bool
	keep       []byte // the Request's Keep, filled by the reader

	// The reader's, until done.
	resp     Response
	err      error
	gotHead  bool
	declared int64 // the response's Content-Length; -1: none
	interim  int64 // header bytes of 1xx responses so far
}

// RoundTrip sends req on a stream of its own and reads the response, giving
// up at deadline with an error that is os.ErrDeadlineExceeded.
// ErrUnprocessed says to send it again on another connection.
func (c *Conn) RoundTrip(req *Request, deadline time.Time) (Response, error) {
	s := c.take()
	defer c.put(s)
	if err := c.reserve(s, deadline); err != nil {
		return Response{}, err
	}
	if err := c.send(s, req, deadline); err != nil {
		return Response{}, err
	}
	<-s.done // by its deadline at the latest (expire.go)
	if !time.Now().Before(deadline) {
		// Read in time, but handed over past the deadline: late, as a
		// read past a socket's deadline is on the HTTP/1.1 client.
		return Response{}, os.ErrDeadlineExceeded
	}
	return s.resp, s.err
}

func (c *Conn) take() *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		s := c.free[n-1]
		c.free = c.free[:n-1]
		return s
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &stream{done: make(chan struct{}, 1), window: make(chan struct{}, 1), timer: t}
}

func (c *Conn) put(s *stream) {
	if s.waiting {
		s.timer.Stop()
		s.waiting = false
	}
	select {
	case <-s.window:
	default:
	}
	c.mu.Lock()
	c.free = append(c.free, s)
	c.mu.Unlock()
}

// reserve waits for a stream the server allows, until deadline.
func (c *Conn) reserve(s *stream, deadline time.Time) error {
	c.mu.Lock()
	for c.err == nil && c.goAway == nil && c.active >= c.maxStreams {
		c.mu.Unlock()
		if !s.waiting {
			s.timer.Reset(time.Until(deadline))
			s.waiting = true
		}
		select {
		case <-c.slot:
		case <-s.timer.C:
			return os.ErrDeadlineExceeded
		}
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if c.err != nil || c.goAway != nil {
		return ErrUnprocessed // nothing was sent: another connection can take it
	}
	c.active++
	if c.active < c.maxStreams {
		c.signalSlot() // pass a wake-up on to the next one waiting
	}
	return nil
}

func (c *Conn) signalSlot() {
	select {
	case c.slot <- struct{}{}:
	default:
	}
}

// send opens s's stream and writes req on it, its body as the server's
// windows let it, by deadline.
func (c *Conn) send(s *stream, req *Request, deadline time.Time) error {
	c.wmu.Lock()
	c.mu.Lock()
	if err := c.openLocked(s, req, deadline); err != nil {
		c.active--
		c.signalSlot()
		c.closeIfGoneLocked()
		c.mu.Unlock()
		c.wmu.Unlock()
		return err
	}
	frame := c.peerFrame // the reader may change it under mu as we write
	c.mu.Unlock()
	c.writeBy(deadline)
	err := c.writeHeaders(s.id, req.Header, len(req.Body) == 0, frame)
	for body := req.Body; err == nil && len(body) > 0; {
		n := c.window(s, len(body))
		if n < 0 {
			break // the stream ended: the response says how
		}
		if n == 0 {
			if err = c.bw.Flush(); err != nil {
				break
			}
			c.wmu.Unlock()
			<-s.window // or the stream ended, by its deadline at the latest
			c.wmu.Lock()
			c.writeBy(deadline)
			continue
		}
		err = c.fr.WriteData(s.id, n == len(body), body[:n])
		body = body[n:]
	}
	if err == nil {
		err = c.flush()
	} else {
		c.wmu.Unlock()
	}
	if err != nil {
		c.fail(err)
	}
	return nil // a failed write ends the stream, with the connection's error
}

// flush writes out the buffered frames and releases the write lock,
// unless the reader is to write them (read.go). With other streams open on
// the connection it first lets the other goroutines run: the callers the
// reader has just woken write their requests into the buffer too, and the
// first to come back writes them all in one TLS record and one syscall,
// where each would pay its own.
func (c *Conn) flush() error {
	if c.readerFlushes {
		c.wmu.Unlock()
		return nil
	}
	c.mu.Lock()
	shared := c.active > 1
	c.mu.Unlock()
	if shared {
		c.wmu.Unlock()
		runtime.Gosched()
		c.wmu.Lock()
	}
	var err error
	if c.bw.Buffered() > 0 && !c.readerFlushes {
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	return err
}

// openLocked gives s the next stream ID and registers it, to end by
// deadline.
func (c *Conn) openLocked(s *stream, req *Request, deadline time.Time) error {
	if c.err != nil || c.goAway != nil || c.nextID >= maxStreamID {
		return ErrUnprocessed
	}
	s.id = c.nextID
	c.nextID += 2
	s.sendWindow = c.peerWindow
	s.head = req.Head
	s.keep = req.Keep[:0]
	s.resp, s.err, s.gotHead, s.declared, s.interim = Response{}, nil, false, -1, 0
	s.open = true
	c.streams[s.id] = s
	s.deadline = deadline
	c.expireByLocked(deadline)
	return nil
}

// window takes up to n bytes of send window for s: 0 when there is none
// yet, -1 when the stream has ended.
func (c *Conn) window(s *stream, n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.open {
		return -1
	}
	n = int(min(int64(n), int64(c.peerFrame), c.sendWindow, s.sendWindow))
	if n <= 0 {
		return 0
	}
	c.sendWindow -= int64(n)
	s.sendWindow -= int64(n)
	return n
}

// writeHeaders writes a header block as HEADERS and CONTINUATION frames of
// at most frame bytes.
func (c *Conn) writeHeaders(id uint32, block []byte, end bool, frame int) error {
	first := true
	for first || len(block) > 0 {
		n := min(len(block), frame)
		frag := block[:n]
		block = block[n:]
		var err error
		if first {
			err = c.fr.WriteHeaders(http2.HeadersFrameParam{
				StreamID: id, BlockFragment: frag, EndStream: end, EndHeaders: len(block) == 0,
			})
		} else {
			err = c.fr.WriteContinuation(id, len(block) == 0, frag)
		}
		if err != nil {
			return err
		}
		first = false
	}
	return nil
}

// finishLocked ends s with err (nil: its response is whole) and wakes its
// caller.
func (c *Conn) finishLocked(s *stream, err error) {
	if !s.open {
		return
	}
	s.open = false
	delete(c.streams, s.id)
	c.active--
	s.err = err
	s.done <- struct{}{}
	select {
	case s.window <- struct{}{}:
	default:
	}
	c.signalSlot()
	c.closeIfGoneLocked()
}

// closeIfGoneLocked closes a connection the server has sent GOAWAY on
// once no stream is left on it, as x/net does: a server that keeps it open
// would hold its descriptor, and a new one's, for every GOAWAY of a run
// (12 299 of them in one 8 s step). A stream under way ends by its own
// deadline, and the connection with the last one.
func (c *Conn) closeIfGoneLocked() {
	if c.goAway != nil && c.active == 0 && c.err == nil {
		c.err = *c.goAway
		c.nc.Close() // the reader then stops
	}
}
