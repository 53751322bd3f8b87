package h1

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// https through the event loop (docs/measurement.md, "The open loop's event
// loops"). A connection's handshake runs on a goroutine of its own, through
// Go's network poller, since crypto/tls cannot take up a handshake it left
// for want of bytes; the loop takes the socket over once it is done. From
// then on the loop reads and writes the socket itself, and crypto/tls only
// seals and opens records, through a tlsLink: what the loop received, and
// what crypto/tls wrote for the loop to send. When crypto/tls finds no
// whole record yet, the link says so with a temporary error, which leaves
// the connection usable: the next bytes received go on from there.

// muxConfig is the TLS configuration of the Mux's handshakes, nil for
// plain HTTP/1.1. When the client offers h2, one handshake asks the server
// which it speaks, once for all the client's Muxes: the Mux carries
// HTTP/1.1 only, and offers only that to a server that chose it.
func (c *Client) muxConfig() (*tls.Config, error) {
	c.muxOnce.Do(func() { c.muxTLS, c.muxErr = c.askALPN() })
	return c.muxTLS, c.muxErr
}

func (c *Client) askALPN() (*tls.Config, error) {
	if c.tls == nil || c.h2 == nil {
		return c.tls, nil
	}
	nc, raw, err := wire.OpenConn(c.aborted, c.addr, c.tls, time.Now().Add(c.req.Timeout), &c.conns)
	if err != nil {
		return nil, err
	}
	c.conns.Remove(raw)
	raw.Close()
	if nc.(*tls.Conn).ConnectionState().NegotiatedProtocol == "h2" {
		return nil, errors.ErrUnsupported
	}
	return wire.WithALPN(c.tls, []string{"http/1.1"}), nil
}

// tlsLink is the connection crypto/tls sees: the socket through Go's
// network poller during the handshake, then the loop's bytes.
type tlsLink struct {
	net.Conn // the handshake's
	tc       *tls.Conn
	held     bool   // by the loop
	in       []byte // received, not yet read by crypto/tls
	eof      bool   // the peer closed the connection after in
	out      []byte // records written, for the loop to send
}

// errNoRecordYet is what the link reads once crypto/tls has taken every
// byte received: a temporary net.Error, which crypto/tls does not keep.
var errNoRecordYet net.Error = noRecordYet{}

type noRecordYet struct{}

func (noRecordYet) Error() string   { return "no whole TLS record received yet" }
func (noRecordYet) Timeout() bool   { return false }
func (noRecordYet) Temporary() bool { return true }

func (l *tlsLink) Read(p []byte) (int, error) {
	switch {
	case !l.held:
		return l.Conn.Read(p)
	case len(l.in) > 0:
		n := copy(p, l.in)
		l.in = l.in[n:]
		return n, nil
	case l.eof:
		return 0, io.EOF
	}
	return 0, errNoRecordYet
}

func (l *tlsLink) Write(p []byte) (int, error) {
	if !l.held {
		return l.Conn.Write(p)
	}
	l.out = append(l.out, p...)
	return len(p), nil
}

// seal returns request as the records to send.
func (l *tlsLink) seal(request []byte) ([]byte, error) {
	l.out = l.out[:0]
	_, err := l.tc.Write(request)
	return l.out, err
}

// open decrypts raw, just received on mc's socket (none: the peer closed
// it), onto the end of mc's answer so far, and sends what crypto/tls
// wrote in return (a key update's).
func (m *Mux) open(mc *muxConn, raw []byte) error {
	l, in := mc.link, &mc.in
	l.in, l.eof = raw, len(raw) == 0
	for {
		n, err := l.tc.Read(grow(&in.b))
		in.b = in.b[:len(in.b)+n]
		switch {
		case err == nil:
			continue
		case err == errNoRecordYet:
		case errors.Is(err, io.EOF):
			in.eof = true
		default:
			return err
		}
		if len(l.out) > len(mc.out) {
			mc.out = l.out
			m.write(mc)
		}
		return nil
	}
}

// sealed is the Mux's room for the bytes of a TLS connection, read before
// they are decrypted: a few of the largest records.
func (m *Mux) sealed() []byte {
	if m.raw == nil {
		m.raw = make([]byte, 64<<10)
	}
	return m.raw
}

// handshakes are those of a Mux's connections that ended and wait for its
// loop.
type handshakes struct {
	mu     sync.Mutex
	done   []*handshake
	took   []*handshake // the loop's, while it takes them
	closed bool         // the Mux is: a handshake that ends closes its socket
	// opening counts the handshakes started and not yet taken.
	opening int
}

// handshake is one connection's: when it ends, its socket (fd) or why not.
type handshake struct {
	conn   int
	cancel context.CancelFunc
	link   *tlsLink
	fd     int
	err    error
}

// shake dials mc and runs its handshake, by the request's timeout at the
// latest; Drop and Close give up on it sooner.
func (m *Mux) shake(mc *muxConn) {
	ctx, cancel := context.WithTimeout(m.c.aborted, m.c.req.Timeout)
	h := &handshake{conn: mc.id, cancel: cancel, fd: -1}
	mc.shaking = h
	m.opening++
	go m.handshake(ctx, h)
}

func (m *Mux) handshake(ctx context.Context, h *handshake) {
	defer h.cancel()
	raw, err := wire.Dial(ctx, m.c.addr, time.Time{})
	if err == nil {
		h.link = &tlsLink{Conn: raw}
		h.link.tc = tls.Client(h.link, m.tls)
		if err = h.link.tc.HandshakeContext(ctx); err == nil {
			h.fd, err = hold(raw)
		}
		raw.Close()
		h.link.held = true
	}
	h.err = err
	m.handshakes.mu.Lock()
	defer m.handshakes.mu.Unlock()
	if m.handshakes.closed {
		closeFD(h.fd)
		return
	}
	m.handshakes.done = append(m.handshakes.done, h)
}

// hold returns a descriptor of raw's socket of its own, which stays open
// when raw is closed: nonblocking, as Go's is.
func hold(raw net.Conn) (int, error) {
	sc, err := raw.(syscall.Conn).SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if cerr := sc.Control(func(s uintptr) { fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); cerr != nil {
		return -1, cerr
	}
	if err != nil {
		return -1, os.NewSyscallError("fcntl", err)
	}
	return fd, nil
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// takeHandshakes sends the request of each connection whose handshake
// ended, or fails it; a connection given up on closes its socket.
func (m *Mux) takeHandshakes() {
	hs := &m.handshakes
	hs.mu.Lock()
	hs.took, hs.done = hs.done, hs.took[:0]
	hs.mu.Unlock()
	for i, h := range hs.took {
		hs.took[i] = nil
		m.opening--
		mc := m.conns[h.conn]
		switch {
		case mc.shaking != h:
			closeFD(h.fd)
		case h.err != nil:
			mc.shaking = nil
			m.fail(mc, h.err)
		default:
			mc.shaking, mc.link = nil, h.link
			if m.watch(mc, h.fd) {
				m.send(mc)
			}
		}
	}
}

func (m *Mux) Opening() bool { return m.opening > 0 }

// closeHandshakes closes the sockets of the handshakes that ended after
// the loop last looked, and makes those still under way close theirs.
func (m *Mux) closeHandshakes() {
	hs := &m.handshakes
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.closed = true
	for _, h := range hs.done {
		closeFD(h.fd)
	}
	hs.done = nil
}
