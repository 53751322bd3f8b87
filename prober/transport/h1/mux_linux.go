package h1

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// The open loop's wire at high rates (docs/measurement.md, "The open
// loop's event loops"). Its connections are nonblocking sockets in an
// epoll set of the Mux's own, outside Go's network poller, so that an
// answer wakes nobody: the loop that drives the Mux collects every answer
// ready when its schedule wakes it, and times each by the kernel's receive
// timestamp of its last bytes (SO_TIMESTAMPNS), not by when it was read.
// An answer is parsed by the lean client's reader, from the bytes received
// so far, again from its start whenever more arrive: most answers come in
// one read, and a large one's buffer doubles, so that it is parsed a few
// times at most. Over TLS, the bytes received are decrypted first
// (mux_tls_linux.go).

// NewMux returns a Mux for the client's request: HTTP/1.1, plain or over
// TLS, one fixed request. The error says why the client's requests need
// more.
func (c *Client) NewMux() (wire.Mux, error) {
	if c.request == nil {
		return nil, errors.ErrUnsupported
	}
	cfg, err := c.muxConfig()
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		return nil, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(c.aborted, "ip", host)
	if err != nil {
		return nil, err
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	m := &Mux{c: c, ep: ep, tls: cfg}
	m.sa, m.domain = sockaddr(netip.AddrPortFrom(ips[0].Unmap(), uint16(p)))
	return m, nil
}

func sockaddr(ap netip.AddrPort) (unix.Sockaddr, int) {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, unix.AF_INET
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}, unix.AF_INET6
}

// Mux is the lean client's wire.Mux.
type Mux struct {
	c      *Client
	sa     unix.Sockaddr
	domain int
	ep     int
	conns  []*muxConn
	idle   []int // connections without a request, closed ones among them
	events []unix.EpollEvent
	ended  []wire.Answer // since the last Answers
	batch  int           // counts the calls of Answers
	// Over TLS (nil for plain HTTP/1.1): the configuration of the
	// handshakes, the handshakes handed over to the loop, and the bytes
	// received before they are decrypted (sealed).
	tls *tls.Config
	handshakes
	raw []byte
	// recvmsg's arguments, kept here: x/sys/unix's Recvmsg allocates.
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte
}

type muxConn struct {
	id       int
	fd       int    // -1: closed
	watching uint32 // the events its epoll entry asks for
	dialed   int    // the Answers batch it was last dialled in
	busy     bool
	reused   bool   // has carried a complete response
	out      []byte // the request as sent: over TLS, its records
	written  int    // of out, while busy
	in       muxInput
	fc       conn       // parses in
	link     *tlsLink   // over TLS: the connection's TLS state
	shaking  *handshake // over TLS: the handshake under way for it
}

// muxInput is what a connection has received of its answer, read by the
// parser as a connection that has nothing more yet (errMore) or, once the
// peer closed it, has ended.
type muxInput struct {
	b   []byte
	pos int
	eof bool
}

var errMore = errors.New("the answer is not complete yet")

func (in *muxInput) Read(p []byte) (int, error) {
	if in.pos == len(in.b) {
		if in.eof {
			return 0, io.EOF
		}
		return 0, errMore
	}
	n := copy(p, in.b[in.pos:])
	in.pos += n
	return n, nil
}

// inputConn gives the parser in where it reads a large body straight from
// its connection; the parser calls nothing else of a net.Conn.
type inputConn struct {
	net.Conn
	in *muxInput
}

func (c inputConn) Read(p []byte) (int, error) { return c.in.Read(p) }

func (m *Mux) Conns() int { return len(m.conns) }

func (m *Mux) Send(grow bool) (int, bool) {
	var mc *muxConn
	switch n := len(m.idle); {
	case n > 0:
		mc = m.conns[m.idle[n-1]]
		m.idle = m.idle[:n-1]
	case grow:
		mc = &muxConn{id: len(m.conns), fd: -1, out: m.c.request}
		mc.fc = conn{c: m.c, br: bufio.NewReaderSize(nil, readBufferSize), nc: inputConn{in: &mc.in}, head: m.c.head}
		m.conns = append(m.conns, mc)
		m.events = append(m.events, unix.EpollEvent{})
	default:
		return 0, false
	}
	mc.busy = true
	mc.in.b, mc.in.eof = mc.in.b[:0], false
	if mc.fd < 0 {
		m.dial(mc)
	} else {
		m.send(mc)
	}
	return mc.id, true
}

// dial opens mc's socket and writes its request at once: on loopback the
// connection is up by then, and elsewhere the socket takes the request
// once it is (a refused one fails the write). Over TLS, the request waits
// for the handshake.
func (m *Mux) dial(mc *muxConn) {
	mc.reused, mc.dialed = false, m.batch
	if m.tls != nil {
		m.shake(mc)
		return
	}
	fd, err := unix.Socket(m.domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		m.fail(mc, os.NewSyscallError("socket", err))
		return
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if !m.watch(mc, fd) {
		return
	}
	if err := unix.Connect(fd, m.sa); err != nil && err != unix.EINPROGRESS {
		m.fail(mc, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)})
		return
	}
	m.send(mc)
}

// watch makes fd mc's socket, timed by the kernel and in the Mux's epoll
// set; false when it could not join the set, and mc's request failed.
func (m *Mux) watch(mc *muxConn, fd int) bool {
	mc.fd = fd
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	mc.watching = unix.EPOLLIN | unix.EPOLLRDHUP
	ev := unix.EpollEvent{Events: mc.watching, Fd: int32(mc.id)}
	if err := unix.EpollCtl(m.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		m.fail(mc, os.NewSyscallError("epoll_ctl", err))
		return false
	}
	return true
}

// send writes the request from its start; over TLS, sealed in records
// first.
func (m *Mux) send(mc *muxConn) {
	mc.written = 0
	if mc.link != nil {
		var err error
		if mc.out, err = mc.link.seal(m.c.request); err != nil {
			m.fail(mc, err)
			return
		}
	}
	m.write(mc)
}

// write writes what is left of the request, and waits for the socket to
// take the rest when it takes only part.
func (m *Mux) write(mc *muxConn) {
	req := mc.out
	n, err := unix.Write(mc.fd, req[mc.written:])
	switch {
	case err == unix.EAGAIN:
	case err != nil:
		m.failOrReplay(mc, os.NewSyscallError("write", err), true)
		return
	default:
		mc.written += n
	}
	watch := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if mc.written < len(req) {
		watch |= unix.EPOLLOUT
	}
	if watch != mc.watching {
		mc.watching = watch
		ev := unix.EpollEvent{Events: watch, Fd: int32(mc.id)}
		unix.EpollCtl(m.ep, unix.EPOLL_CTL_MOD, mc.fd, &ev)
	}
}

func (m *Mux) Answers(dst []wire.Answer) []wire.Answer {
	m.batch++
	if m.opening > 0 {
		m.takeHandshakes()
	}
	n := 0
	if len(m.conns) > 0 {
		n, _ = unix.EpollWait(m.ep, m.events, 0) // EINTR: the next call finds them
	}
	for _, ev := range m.events[:max(n, 0)] {
		mc := m.conns[ev.Fd]
		switch {
		case mc.fd < 0, mc.dialed == m.batch:
			// Closed, or dialled again, since the event.
		case ev.Events&unix.EPOLLOUT != 0 && mc.written < len(mc.out):
			m.write(mc)
		case !mc.busy:
			m.close(mc) // the peer closed an idle connection, or spoke unasked
		default:
			m.read(mc)
		}
	}
	for _, a := range m.ended {
		m.idle = append(m.idle, a.Conn)
	}
	dst = append(dst, m.ended...)
	m.ended = m.ended[:0]
	return dst
}

// read reads what arrived for mc's request and hands over its answer once
// it is complete.
func (m *Mux) read(mc *muxConn) {
	in := &mc.in
	var p []byte
	if mc.link == nil {
		p = grow(&in.b)
	} else {
		p = m.sealed()
	}
	n, oobn, err := m.recv(mc.fd, p)
	switch {
	case err == unix.EAGAIN:
		return
	case err != nil:
		m.failOrReplay(mc, os.NewSyscallError("read", err), len(in.b) == 0)
		return
	}
	at := received(m.oob[:oobn])
	if mc.link == nil {
		in.b, in.eof = in.b[:len(in.b)+n], n == 0
	} else if err := m.open(mc, p[:n]); err != nil {
		m.failOrReplay(mc, err, len(in.b) == 0)
		return
	}
	in.pos = 0
	mc.fc.br.Reset(in)
	code, keep, _, err := mc.fc.readResponse()
	switch {
	case errors.Is(err, errMore):
		return
	case err != nil:
		m.failOrReplay(mc, err, len(in.b) == 0)
		return
	}
	if in.pos-mc.fc.br.Buffered() < len(in.b) {
		keep = false // more than the answer: net/http would not reuse it
	}
	m.ended = append(m.ended, wire.Answer{Conn: mc.id, Code: result.HTTPStatus(code), Outcome: wire.Outcome(m.c.req, code), At: at})
	mc.busy = false
	if cap(in.b) > maxKeptInput {
		in.b = nil
	}
	if keep && m.c.keepAlive {
		mc.reused = true
	} else {
		m.close(mc)
	}
}

// grow returns the free room at the end of b, which it makes when there is
// none: a large answer's room doubles, so that it is parsed a few times at
// most.
func grow(b *[]byte) []byte {
	if len(*b) == cap(*b) {
		*b = slices.Grow(*b, max(readBufferSize, len(*b)))
	}
	return (*b)[len(*b):cap(*b)]
}

// maxKeptInput is the most a connection keeps of its buffer between
// answers: a large answer's is let go.
const maxKeptInput = 64 << 10

// recv reads into p what arrived on fd, with the control messages of its
// receive time in m.oob.
func (m *Mux) recv(fd int, p []byte) (n, oobn int, err error) {
	m.iov.Base = &p[0]
	m.iov.SetLen(len(p))
	m.msg.Iov = &m.iov
	m.msg.SetIovlen(1)
	m.msg.Control = &m.oob[0]
	m.msg.SetControllen(len(m.oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&m.msg)), 0)
	if errno != 0 {
		return 0, 0, errno
	}
	return int(r), int(m.msg.Controllen), nil
}

// received is the kernel's receive time of the bytes just read, from
// their control message; now without one.
func received(oob []byte) time.Time {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if int(h.Len) < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			break
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && int(h.Len) >= unix.SizeofCmsghdr+16 {
			b := oob[unix.SizeofCmsghdr:]
			return time.Unix(int64(binary.NativeEndian.Uint64(b)), int64(binary.NativeEndian.Uint64(b[8:])))
		}
		oob = oob[min(unix.CmsgSpace(int(h.Len)-unix.SizeofCmsghdr), len(oob)):]
	}
	return time.Now()
}

// failOrReplay ends mc's request with err, or, when a reused connection
// turns out to have been closed by the server before it read the request,
// sends a replayable one again on a fresh connection (as the lean client
// does).
func (m *Mux) failOrReplay(mc *muxConn, err error, nothing bool) {
	if mc.reused && nothing && m.c.replayable && isStale(err) {
		m.close(mc)
		mc.written = 0
		m.dial(mc)
		return
	}
	m.fail(mc, err)
}

// fail ends mc's request with err and closes it. The connection is idle
// once Answers hands the failure over: until then it names the request.
func (m *Mux) fail(mc *muxConn, err error) {
	m.ended = append(m.ended, wire.Answer{Conn: mc.id, Outcome: wire.Classify(err), At: time.Now()})
	m.close(mc)
	mc.busy = false
}

func (m *Mux) Drop(conn int) {
	mc := m.conns[conn]
	if mc.busy {
		m.close(mc)
		mc.busy = false
		m.idle = append(m.idle, mc.id)
	}
}

func (m *Mux) close(mc *muxConn) {
	if mc.shaking != nil {
		mc.shaking.cancel()
		mc.shaking = nil
	}
	if mc.fd >= 0 {
		unix.Close(mc.fd) // leaves the epoll set with it
		mc.fd, mc.reused = -1, false
	}
	mc.link = nil
}

func (m *Mux) Close() {
	for _, mc := range m.conns {
		m.close(mc)
	}
	m.closeHandshakes()
	unix.Close(m.ep)
}
