package testkit

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a raw TCP server on loopback that counts the connections it
// accepts and hands each to a handler.
type Server struct {
	ln       net.Listener
	URL      string       // http://ADDR/path?q=1
	Accepted atomic.Int64 // connections accepted
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
}

// NewServer starts a Server whose connections handle serves, until the
// test ends.
func NewServer(tb testing.TB, handle func(net.Conn)) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{ln: ln, URL: "http://" + ln.Addr().String() + "/path?q=1"}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.Accepted.Add(1)
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				handle(c)
			}()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// BenchResponse is the answer of FixedServer.
const BenchResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// FixedServer answers every request with BenchResponse, as cheaply as a
// server can: it only counts request ends ("\r\n\r\n") in what it reads.
func FixedServer(c net.Conn) { FixedAnswer(BenchResponse)(c) }

// FixedAnswer is FixedServer with another response; it allocates nothing per
// request, so that allocation counts see only the client's.
func FixedAnswer(resp string) func(net.Conn) {
	return func(c net.Conn) { serveFixed(c, resp) }
}

func serveFixed(c net.Conn, resp string) {
	defer c.Close()
	buf := make([]byte, 16<<10)
	out := make([]byte, 0, 16<<10)
	const end = "\r\n\r\n"
	matched := 0
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		out = out[:0]
		for _, b := range buf[:n] {
			switch {
			case b == end[matched]:
				matched++
			case b == '\r':
				matched = 1
			default:
				matched = 0
			}
			if matched == len(end) {
				matched = 0
				out = append(out, resp...)
			}
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}
