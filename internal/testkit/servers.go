package testkit

import (
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// ServeLoopback serves every connection to a loopback listener with
// serve, which the connection is closed after, until the test ends. It
// returns the listener's address.
func ServeLoopback(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// Upgrade upgrades r's connection to a WebSocket session and hands it to
// behave.
func Upgrade(w http.ResponseWriter, r *http.Request, behave func(*websocket.Conn)) {
	s, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer s.Close()
	behave(s)
}

// Echo sends every message of a session back as it came.
func Echo(s *websocket.Conn) {
	for {
		typ, msg, err := s.ReadMessage()
		if err != nil || s.WriteMessage(typ, msg) != nil {
			return
		}
	}
}

// CPUTime is the CPU time, user and system, the process has used so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the CPU time used since since per operation of b.
func ReportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(CPUTime()-since)/float64(b.N), "cpu-ns/op")
}
