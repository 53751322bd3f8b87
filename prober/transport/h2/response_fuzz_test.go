package h2_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/loadprobe/loadprobe/prober/transport/h2"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// FuzzReadResponseH2 is FuzzReadResponse's twin for HTTP/2: the bytes are
// the frames a server writes once it has read the request (after its
// SETTINGS), and the lean HTTP/2 client (prober/internal/h2) must make of
// them what golang.org/x/net/http2's transport (net/http's, the std path's, is generated from it) makes: the
// same status code and the same outcome. x/net's client is configured as
// the lean one where it can be (16 KiB frames, the same header limits).
func FuzzReadResponseH2(f *testing.F) {
	for _, seed := range [][]byte{
		h2Frames(h2Headers(1, true, false, ":status", "200")),
		h2Frames(h2Headers(1, false, false, ":status", "200", "content-length", "5"), h2Data(1, true, "hello")),
		h2Frames(h2Headers(1, false, false, ":status", "200", "content-length", "9"), h2Data(1, true, "short")),
		h2Frames(h2Headers(1, false, false, ":status", "200", "content-length", "2"), h2Data(1, true, "too long")),
		h2Frames(h2Headers(1, false, false, ":status", "100"), h2Headers(1, true, false, ":status", "204")),
		h2Frames(h2Headers(1, true, false, ":status", "100")),
		h2Frames(h2Headers(1, false, false, ":status", "200"), h2Data(1, false, "a"), h2Headers(1, true, false, "x-t", "1")),
		h2Frames(h2Headers(1, false, false, ":status", "200"), h2Headers(1, false, false, "x-t", "1")),
		h2Frames(h2Headers(1, true, false, ":status", "2x0")),
		h2Frames(h2Headers(1, true, false, "server", "x")),
		h2Frames(h2Headers(1, true, false, ":status", "200", "X-Upper", "1")),
		h2Frames(h2Headers(1, true, false, "x-a", "1", ":status", "200")),
		h2Frames(h2Headers(1, true, true, ":status", "404", "server", "nginx")),
		h2Frames(h2RST(1, http2.ErrCodeInternal)),
		h2Frames(h2RST(1, http2.ErrCodeRefusedStream)),
		h2Frames(h2GoAway(0)),
		h2Frames(h2GoAway(1), h2Headers(1, true, false, ":status", "200")),
		h2Frames(h2Data(1, true, "x")),
		h2Frames(h2Data(3, true, "x")),
		h2Frames(h2Headers(1, false, false, ":status", "200"), h2Data(1, true, "")),
		{0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, // a PING
		{0, 0, 0, 0x20, 0, 0, 0, 0, 1},                      // an unknown frame type
		[]byte("HTTP/1.1 200 OK\r\n\r\n"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, frames []byte) {
		if len(frames) > 16<<10 {
			return
		}
		lean, std := h2LeanRead(t, frames), h2StdRead(t, frames)
		if lean != std {
			t.Errorf("%q:\n lean HTTP/2 client %+v\n x/net/http2        %+v", frames, lean, std)
		}
	})
}

// h2Result is what a client made of a response: its code and outcome; a
// request the server did not process is an outcome of its own, as both
// paths send it again.
type h2Result struct {
	code        int
	outcome     result.Outcome
	unprocessed bool
}

func h2LeanRead(t *testing.T, frames []byte) h2Result {
	nc := h2Server(t, frames)
	c, err := h2.New(nc, h2.Options{MaxBody: wire.MaxBodyBytes, MaxHeaderList: wire.MaxHeaderBytes, WriteTimeout: time.Second},
		time.Now().Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var block []byte
	for _, f := range [][2]string{{":authority", "127.0.0.1"}, {":method", "GET"}, {":path", "/"}, {":scheme", "https"}} {
		block = h2.AppendField(block, f[0], []byte(f[1]))
	}
	resp, err := c.RoundTrip(&h2.Request{Header: block}, time.Now().Add(2*time.Second))
	switch {
	case errors.Is(err, h2.ErrUnprocessed):
		return h2Result{unprocessed: true}
	case err != nil:
		return h2Result{outcome: wire.Classify(err)}
	}
	return h2Result{code: resp.Status}
}

func h2StdRead(t *testing.T, frames []byte) h2Result {
	nc := h2Server(t, frames)
	// The std path's HTTP/2 is net/http's, generated from this package
	// (h2_bundle.go); x/net's ClientConn gives the one connection the twin
	// compares, without the Transport's pool and retries.
	//lint:ignore SA1019 see above
	tr := &http2.Transport{MaxReadFrameSize: 16 << 10, MaxHeaderListSize: wire.MaxHeaderBytes}
	//lint:ignore SA1019 see above
	cc, err := tr.NewClientConn(nc)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://127.0.0.1/", nil)
	req.Header.Set("Accept-Encoding", "identity") // no transparent gzip: the lean client asks for none
	resp, err := cc.RoundTrip(req)
	if err == nil {
		// Read as the std path reads a body: to its end or to the bound.
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, wire.MaxBodyBytes+1))
		resp.Body.Close()
	}
	var se http2.StreamError
	switch {
	case err != nil && (errors.As(err, &se) && se.Code == http2.ErrCodeRefusedStream ||
		err.Error() == "http2: Transport received Server's graceful shutdown GOAWAY"):
		return h2Result{unprocessed: true}
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return h2Result{outcome: result.Timeout}
	case err != nil:
		return h2Result{outcome: wire.Classify(err)}
	}
	return h2Result{code: resp.StatusCode}
}

// h2Server answers on a loopback connection: its SETTINGS, then, once the
// request's HEADERS came, frames, and the end of its stream; it reads what
// the client writes until the client closes.
func h2Server(t *testing.T, frames []byte) net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		sc, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		defer sc.Close()
		sc.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(sc)
		if _, err := br.Discard(len(http2.ClientPreface)); err != nil {
			return
		}
		fr := http2.NewFramer(sc, br)
		fr.WriteSettings()
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if _, ok := f.(*http2.HeadersFrame); ok {
				break
			}
		}
		sc.Write(frames)
		sc.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, br)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

func h2Frames(frames ...[]byte) []byte {
	var b []byte
	for _, f := range frames {
		b = append(b, f...)
	}
	return b
}

func h2Frame(typ http2.FrameType, flags http2.Flags, id uint32, p []byte) []byte {
	b := []byte{byte(len(p) >> 16), byte(len(p) >> 8), byte(len(p)), byte(typ), byte(flags),
		byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
	return append(b, p...)
}

// h2Headers is a HEADERS frame of name, value pairs, HPACK-encoded, the
// values Huffman-coded and added to the table when indexed.
func h2Headers(id uint32, end, indexed bool, fields ...string) []byte {
	var block []byte
	for i := 0; i+1 < len(fields); i += 2 {
		if indexed {
			block = append(block, 0x40)
		} else {
			block = append(block, 0)
		}
		block = append(block, byte(len(fields[i])))
		block = append(block, fields[i]...)
		v := hpack.AppendHuffmanString(nil, fields[i+1])
		block = append(block, 0x80|byte(len(v)))
		block = append(block, v...)
	}
	flags := http2.FlagHeadersEndHeaders
	if end {
		flags |= http2.FlagHeadersEndStream
	}
	return h2Frame(http2.FrameHeaders, flags, id, block)
}

func h2Data(id uint32, end bool, data string) []byte {
	var flags http2.Flags
	if end {
		flags = http2.FlagDataEndStream
	}
	return h2Frame(http2.FrameData, flags, id, []byte(data))
}

func h2RST(id uint32, code http2.ErrCode) []byte {
	return h2Frame(http2.FrameRSTStream, 0, id, []byte{byte(code >> 24), byte(code >> 16), byte(code >> 8), byte(code)})
}

func h2GoAway(last uint32) []byte {
	return h2Frame(http2.FrameGoAway, 0, 0, []byte{byte(last >> 24), byte(last >> 16), byte(last >> 8), byte(last), 0, 0, 0, 0})
}
