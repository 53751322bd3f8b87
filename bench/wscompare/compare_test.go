// Package wscompare measures the WebSocket client libraries loadprobe could
// use on what a WebSocket probe repeats: one message round trip (write a
// message, read the whole next one) on an open session. It is a module of
// its own so that only the chosen library stays in loadprobe's go.mod; run
// it with `go test -bench . -benchmem` in this folder. bench/BENCH.md holds
// the figures and the choice.
//
// Every client talks to the same echo server, a raw loop that allocates
// nothing per message, so allocs/op is the client's own.
package wscompare

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	gorilla "github.com/gorilla/websocket"
)

var payload = []byte(`{"op":"ping","seq":1}`)

// echoServer upgrades with gobwas's zero-copy upgrader, then echoes each
// frame back from one reused buffer.
func echoServer(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveEcho(c)
		}
	}()
	return "ws://" + ln.Addr().String() + "/"
}

func serveEcho(c net.Conn) {
	defer c.Close()
	if _, err := ws.Upgrade(c); err != nil {
		return
	}
	r := bufio.NewReader(c)
	var hdr [14]byte
	buf := make([]byte, 64<<10)
	frame := make([]byte, 0, len(buf)+len(hdr)) // reused: the echo allocates nothing per message
	for {
		if _, err := io.ReadFull(r, hdr[:2]); err != nil {
			return
		}
		op, n := hdr[0]&0x0f, int(hdr[1]&0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(r, hdr[2:4]); err != nil {
				return
			}
			n = int(binary.BigEndian.Uint16(hdr[2:4]))
		case 127:
			return // not in this benchmark
		}
		var mask [4]byte
		if _, err := io.ReadFull(r, mask[:]); err != nil {
			return
		}
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return
		}
		if op == 0x8 { // close
			return
		}
		out := buf[:n]
		for i := range out {
			out[i] ^= mask[i%4]
		}
		h := hdr[:2]
		h[0] = 0x80 | op
		if n < 126 {
			h[1] = byte(n)
		} else {
			h = hdr[:4]
			h[1] = 126
			binary.BigEndian.PutUint16(hdr[2:4], uint16(n))
		}
		frame = append(append(frame[:0], h...), out...)
		if _, err := c.Write(frame); err != nil {
			return
		}
	}
}

// BenchmarkRoundTrip/coder: coder/websocket with a deadline per call, as a
// probe needs one (its API takes a context per Read and Write).
func BenchmarkRoundTrip(b *testing.B) {
	url := echoServer(b)
	b.Run("coder", func(b *testing.B) {
		c, _, err := coder.Dial(context.Background(), url, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		buf := make([]byte, 4096)
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Second))
			if err := c.Write(ctx, coder.MessageText, payload); err != nil {
				b.Fatal(err)
			}
			_, r, err := c.Reader(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := r.Read(buf); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
			cancel()
		}
	})
	b.Run("coder-no-deadline", func(b *testing.B) {
		c, _, err := coder.Dial(context.Background(), url, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		buf := make([]byte, 4096)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Write(ctx, coder.MessageText, payload); err != nil {
				b.Fatal(err)
			}
			_, r, err := c.Reader(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := r.Read(buf); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("gorilla", func(b *testing.B) {
		c, _, err := gorilla.DefaultDialer.Dial(url, http.Header{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, 4096)
		b.ReportAllocs()
		for b.Loop() {
			deadline := time.Now().Add(time.Second)
			_ = c.SetWriteDeadline(deadline)
			_ = c.SetReadDeadline(deadline)
			if err := c.WriteMessage(gorilla.TextMessage, payload); err != nil {
				b.Fatal(err)
			}
			_, r, err := c.NextReader()
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := r.Read(buf); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("gobwas", func(b *testing.B) {
		c, _, _, err := ws.Dial(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		rd := wsutil.NewClientSideReader(c)
		wr := wsutil.NewWriter(c, ws.StateClientSide, ws.OpText)
		buf := make([]byte, 4096)
		b.ReportAllocs()
		for b.Loop() {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			if _, err := wr.Write(payload); err != nil {
				b.Fatal(err)
			}
			if err := wr.Flush(); err != nil {
				b.Fatal(err)
			}
			if _, err := rd.NextFrame(); err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := rd.Read(buf); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
