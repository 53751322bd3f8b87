package h2

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
)

// TestStreamsEndAtTheirDeadlines sends requests with deadlines in any
// order to a server that never answers: each ends at its own deadline,
// to the nanosecond of virtual time, and is reset, whichever deadline the
// connection's one timer was set for when it was sent.
func TestStreamsEndAtTheirDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, sc := net.Pipe()
		resets := make(chan uint32, 16)
		go silentServer(sc, resets, nil)
		c := start(t, cc)
		start := time.Now()
		deadlines := []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 100 * time.Millisecond, 5 * time.Second}
		ended := make([]time.Duration, len(deadlines))
		var wg sync.WaitGroup
		for i, d := range deadlines {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * time.Millisecond) // sent in this order
				_, err := c.RoundTrip(request("GET", "example", "/", nil), start.Add(d))
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("request %d: error %v, want a deadline", i, err)
				}
				ended[i] = time.Since(start)
			})
		}
		wg.Wait()
		if !slices.Equal(ended, deadlines) {
			t.Errorf("the requests ended after %v, want %v", ended, deadlines)
		}
		synctest.Wait()
		var got []uint32
		for len(resets) > 0 {
			got = append(got, <-resets)
		}
		slices.Sort(got)
		if want := []uint32{1, 3, 5, 7, 9}; !slices.Equal(got, want) {
			t.Errorf("the server saw streams %v reset, want %v", got, want)
		}
	})
}

// TestPingIsAnswered has the server ping an idle connection: the reader
// answers it at once, with no request to take the answer along.
func TestPingIsAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, sc := net.Pipe()
		acks := make(chan [8]byte, 1)
		go silentServer(sc, nil, acks)
		start(t, cc)
		select {
		case data := <-acks:
			if data != pingData {
				t.Errorf("the ping was answered with %x, want %x", data, pingData)
			}
		case <-time.After(time.Minute):
			t.Error("the ping was not answered")
		}
	})
}

var pingData = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}

// silentServer reads a client connection's frames, acknowledges its
// SETTINGS, answers no request and reports the streams the client resets.
// With acks, it pings the client once and reports its answer. Its writes
// go through a goroutine of their own: over net.Pipe, a write waits for
// the client's reader, which may itself be writing.
func silentServer(sc net.Conn, resets chan<- uint32, acks chan<- [8]byte) {
	defer sc.Close()
	out := make(chan []byte, 4)
	defer close(out)
	go func() {
		for b := range out {
			sc.Write(b)
		}
	}()
	write := func(f func(fr *http2.Framer) error) {
		var buf bytes.Buffer
		f(http2.NewFramer(&buf, nil))
		out <- buf.Bytes()
	}
	br := bufio.NewReader(sc)
	if _, err := br.Discard(len(http2.ClientPreface)); err != nil {
		return
	}
	write(func(fr *http2.Framer) error { return fr.WriteSettings() })
	if acks != nil {
		write(func(fr *http2.Framer) error { return fr.WritePing(false, pingData) })
	}
	fr := http2.NewFramer(nil, br)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				write(func(fr *http2.Framer) error { return fr.WriteSettingsAck() })
			}
		case *http2.RSTStreamFrame:
			resets <- f.StreamID
		case *http2.PingFrame:
			if f.IsAck() {
				acks <- f.Data
			}
		}
	}
}
