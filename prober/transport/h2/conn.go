// Package h2 is a lean HTTP/2 client for load (RFC 9113): one connection,
// whose streams carry requests serialized once and whose responses are
// read to their status, length and end, with no allocation per request.
//
// One goroutine per connection reads its frames and hands each stream its
// outcome; the callers of RoundTrip write their own requests, one stream
// each, as many at once as the server allows. The client's flow-control
// windows are opened wide at the start, so that a response never waits
// for a WINDOW_UPDATE; request bodies follow the server's windows. Frames
// are written by golang.org/x/net/http2's Framer and read in place in the
// connection's read buffer; header blocks are decoded with the connection's
// HPACK state. A request is a header block and a body; a
// response is a status, a body length and whether trailers came: what a
// gRPC call needs as well.
package h2

import (
	"bufio"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// Options bound what a connection accepts from its server.
type Options struct {
	// MaxBody is how much of a response body a stream reads; past it the
	// stream is reset and the response counts by its status.
	MaxBody int64
	// MaxHeaderList bounds a response's header list (RFC 9113 sizes, 1xx
	// responses included), advertised as SETTINGS_MAX_HEADER_LIST_SIZE.
	MaxHeaderList int
	// WriteTimeout bounds the connection's own writes (acknowledgements,
	// window updates, resets), which no request's deadline covers.
	WriteTimeout time.Duration
}

const (
	// streamWindow is every stream's receive window, advertised once:
	// wider than any body a stream reads, so it never needs an update.
	streamWindow = 1 << 30
	// connWindow is the connection's receive window; it is topped up by
	// one WINDOW_UPDATE whenever half of it has been used.
	connWindow = 1 << 30
	maxFrame   = 16 << 10 // SETTINGS_MAX_FRAME_SIZE, left at its default
	// writeBuffer holds the requests that the answers of one read let the
	// callers send, so that one write carries them: 4 KiB held 28 gRPC
	// calls and split the rest off into a write of their own.
	writeBuffer = 16 << 10
	maxStreamID = 1<<31 - 1
	// defaultMaxStreams is the concurrency assumed until the server's
	// SETTINGS say otherwise, as golang.org/x/net/http2 assumes.
	defaultMaxStreams = 100
)

// Conn is one client connection. RoundTrip may be called from several
// goroutines at once; each call is one stream.
type Conn struct {
	nc   net.Conn
	opts Options
	br   *bufio.Reader

	wmu           sync.Mutex // the writes: bw, fr, the write deadline
	bw            *bufio.Writer
	fr            *http2.Framer
	writeDeadline wire.Deadline // the one set on nc
	readerFlushes bool          // the reader writes out what the callers write (read.go)
	plain         bool          // nc is a TCP connection, without TLS

	mu         sync.Mutex
	streams    map[uint32]*stream
	free       []*stream
	nextID     uint32
	active     int // streams reserved or open
	maxStreams int // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	peerWindow int64
	sendWindow int64 // the connection's send window
	peerFrame  int   // the server's SETTINGS_MAX_FRAME_SIZE
	goAway     *GoAwayError
	expiry     *time.Timer   // ends streams at their deadlines (expire.go)
	expireAt   time.Time     // when expiry fires; zero: not set
	err        error         // the connection's end; nil while it works
	slot       chan struct{} // a stream ended: one waiting for a slot looks again
	done       chan struct{} // closed when the reader has stopped

	reader // the reader goroutine's own state (read.go)
}

// New starts the client side of an HTTP/2 connection over nc, whose TLS
// handshake (ALPN "h2") is done: it writes the preface and the client's
// settings by deadline and starts the connection's reader. nc belongs to
// the Conn from then on.
func New(nc net.Conn, opts Options, deadline time.Time) (*Conn, error) {
	c := &Conn{
		nc:         nc,
		opts:       opts,
		br:         bufio.NewReaderSize(nc, 9+maxFrame),
		bw:         bufio.NewWriterSize(nc, writeBuffer),
		streams:    make(map[uint32]*stream),
		nextID:     1,
		maxStreams: defaultMaxStreams,
		peerWindow: 65535,
		sendWindow: 65535,
		peerFrame:  maxFrame,
		slot:       make(chan struct{}, 1),
		done:       make(chan struct{}),
	}
	_, c.plain = nc.(*net.TCPConn)
	c.fr = http2.NewFramer(c.bw, nil)
	c.expiry = time.AfterFunc(time.Hour, c.expire)
	c.expiry.Stop()
	c.reader.init(c)
	// The reader reads for as long as the connection lives, whatever
	// deadline its dial had: each stream has its own.
	nc.SetReadDeadline(time.Time{})
	c.writeBy(deadline)
	c.bw.WriteString(http2.ClientPreface)
	c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: streamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: uint32(opts.MaxHeaderList)},
	)
	c.fr.WriteWindowUpdate(0, connWindow-65535)
	if err := c.bw.Flush(); err != nil {
		nc.Close()
		return nil, err
	}
	go c.readLoop()
	return c, nil
}

// Usable reports whether a new request can be sent on the connection.
func (c *Conn) Usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil && c.goAway == nil && c.nextID < maxStreamID
}

// Done is closed once the connection has ended and its reader stopped.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close closes the connection: every stream under way ends with an error.
// It returns once the reader has stopped.
func (c *Conn) Close() {
	c.fail(net.ErrClosed)
	<-c.done
}

// fail ends the connection with err (the first error counts) and every
// stream open on it.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		for _, s := range c.streams {
			c.finishLocked(s, err)
		}
		c.expiry.Stop()
	}
	c.mu.Unlock()
	c.nc.Close()
}

// control writes a frame of the connection's own, by WriteTimeout: a
// server that does not read its acknowledgements ends the connection.
func (c *Conn) control(write func(fr *http2.Framer) error) {
	if err := c.writeControl(write, true); err != nil {
		c.fail(err)
	}
}

// writeControl writes a frame of the connection's own into the write
// buffer, by WriteTimeout, and flushes the buffer if flush says so.
func (c *Conn) writeControl(write func(fr *http2.Framer) error, flush bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.writeBy(time.Now().Add(c.opts.WriteTimeout))
	err := write(c.fr)
	if err == nil && flush {
		err = c.bw.Flush()
	}
	return err
}

// writeBy bounds the writes that follow by deadline, under wmu, keeping a
// deadline already set within wire.DeadlineSlack of it.
func (c *Conn) writeBy(deadline time.Time) {
	if at, move := c.writeDeadline.Move(deadline); move {
		c.nc.SetWriteDeadline(at)
	}
}
