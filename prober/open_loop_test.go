package prober

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/prober/transport"
)

// doMux is a transport.Mux over a Transport's Conns, for the engine's tests
// on virtual time: each request is a Do of its own, on a goroutine of its
// own, and ends when it returns (or at its timeout, as the loop gives up).
type doMux struct {
	t       transport.Transport
	timeout time.Duration

	mu    sync.Mutex
	conns []transport.Conn
	sends []int // by connection: counts its requests, so that a dropped one's late end is let go
	idle  []int
	ended []transport.Answer
}

func (m *doMux) Send(grow bool) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c int
	switch n := len(m.idle); {
	case n > 0:
		c, m.idle = m.idle[n-1], m.idle[:n-1]
	case grow:
		c = len(m.conns)
		m.conns = append(m.conns, m.t.NewConn(template.NewVars(0)))
		m.sends = append(m.sends, 0)
	default:
		return 0, false
	}
	m.sends[c]++
	send, conn := m.sends[c], m.conns[c]
	go func() {
		code, o := conn.Do(time.Now().Add(m.timeout))
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.sends[c] == send {
			m.ended = append(m.ended, transport.Answer{Conn: c, Code: code, Outcome: o, At: time.Now()})
		}
	}()
	return c, true
}

func (m *doMux) Conns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.conns)
}

// Opening is false: a connection opens within its first Do.
func (m *doMux) Opening() bool { return false }

func (m *doMux) Answers(dst []transport.Answer) []transport.Answer {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.ended {
		m.idle = append(m.idle, a.Conn)
	}
	dst = append(dst, m.ended...)
	m.ended = m.ended[:0]
	return dst
}

func (m *doMux) Drop(c int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sends[c]++
	m.ended = slices.DeleteFunc(m.ended, func(a transport.Answer) bool { return a.Conn == c })
	m.idle = append(m.idle, c)
}

func (m *doMux) Close() {}

// muxing offers a test's transport to the event loops as a doMux.
type muxing struct {
	transport.Transport
	timeout time.Duration
}

func (m muxing) NewMux() (transport.Mux, error) {
	return &doMux{t: m.Transport, timeout: m.timeout}, nil
}

// openSenders are the open loop's two ways of sending, each judged by the
// same tests: the senders, and the event loops at any rate.
var openSenders = []struct {
	name      string
	loopsFrom float64
}{
	{"senders", math.Inf(1)},
	{"event loops", math.SmallestNonzeroFloat64},
}

// eachSender runs test once with each of the open loop's ways of sending,
// in parallel.
func eachSender(t *testing.T, test func(t *testing.T, loopsFrom float64)) {
	for _, s := range openSenders {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			test(t, s.loopsFrom)
		})
	}
}
