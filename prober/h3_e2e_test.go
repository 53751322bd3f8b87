package prober

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// h3Server serves h over HTTP/3 on loopback, and returns its address and
// a CA file that trusts its certificate.
func h3Server(t testing.TB, h http.Handler) (addr, caFile string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- target.ServeHandlerH3(ctx, "127.0.0.1:0", h, nil, func(a net.Addr, cert *x509.Certificate) {
			addr, caFile = a.String(), certFile(t, cert.Raw)
			close(ready)
		})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("ServeH3: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeH3: %v", err)
		}
	})
	return addr, caFile
}

// certFile writes a DER certificate as a PEM file of the test's.
func certFile(t testing.TB, der []byte) string {
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The demo target's /work pool of 4 workers of 100 ms (40/s at 4) over
// HTTP/3 and over https: a concurrency ramp finds the knee at the pool's
// size, a rate ramp at its rate, on both. At 4 connections each worker
// also waits for the client's own time per request, which under the race
// detector is 2–2.6 ms over QUIC: with 50 ms of work, 4 connections read
// 76/s, 95.0% of the peak, where the knee rule needs 95% (CI, stop 45).
// With 100 ms it costs 2.5%, and 3 s steps keep the count of requests a
// worker finishes in the measured window from costing more than 1.5%.
func TestH3FindsTheKneeAsHTTPSDoes(t *testing.T) {
	opts := target.Options{Workers: 4, WorkTime: 100 * time.Millisecond}
	addr, ca := h3Server(t, target.New(opts))
	tlsServer := httptest.NewUnstartedServer(target.New(opts))
	tlsServer.StartTLS()
	t.Cleanup(tlsServer.Close)
	tcpCA := certFile(t, tlsServer.Certificate().Raw)
	for _, c := range []struct{ name, url, request string }{
		{"h3", "https://" + addr + "/work", fmt.Sprintf("      http3: true\n      tls_config: {ca_file: %q}\n", ca)},
		{"https", tlsServer.URL + "/work", fmt.Sprintf("      tls_config: {ca_file: %q}\n", tcpCA)},
	} {
		for _, l := range []struct {
			load string
			knee float64
		}{{"concurrency: [2, 4, 8]", 4}, {"rate: [20, 40, 60]", 40}} {
			t.Run(c.name+" "+l.load, func(t *testing.T) {
				r := mustRun(t, context.Background(), probeWith(t, c.url, c.request, l.load+"\nstep_duration: 3s\nwarmup: 200ms"), Options{})
				logRun(t, r)
				if k := r.BreakingPoints.Knee; k == nil || k.Level != l.knee {
					t.Errorf("knee %+v, want %g", k, l.knee)
				}
				if !within(r.PeakThroughput, 40, 0.10) {
					t.Errorf("peak %.1f/s, want within 10%% of 40/s", r.PeakThroughput)
				}
				if s := r.Steps[0]; s.ErrorRatio != 0 {
					t.Errorf("level %g: error ratio %g, errors %v", s.Level, s.ErrorRatio, s.Errors)
				}
			})
		}
	}
}

// Each hostile HTTP/3 server ends every attempt in its outcome, within
// the attempt's timeout; a flood of GOAWAY leaves the heap as it found
// it. (The other servers are quic-go's in this process, and each keeps a
// connection's state until its idle timeout: 3 000 aborted handshakes
// hold some 60 MiB of theirs, not the client's.) A GOAWAY
// that names stream 0 refuses every request, but quic-go neither fails
// nor retries one already sent: with a server that answers none, each
// waits for its timeout.
func TestH3HostileServers(t *testing.T) {
	addr, _ := h3Server(t, target.New(target.Options{}))
	resets, resetsCA := h3Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if str, err := w.(http3.HTTPStreamer).HTTPStream(); err == nil {
			str.CancelRead(quic.StreamErrorCode(http3.ErrCodeInternalError))
			str.CancelWrite(quic.StreamErrorCode(http3.ErrCodeInternalError))
		}
	}))
	negotiating := udpServer(t, versionNegotiation)
	flooding, floodingCA := goawayFlood(t)
	silent := udpServer(t, func([]byte) []byte { return nil })
	for _, c := range []struct {
		name, url, tls string
		want           result.Outcome
		heapBound      bool // the client alone holds memory: its heap is checked
	}{
		{"never answers", "https://" + silent + "/", "", result.Timeout, false},
		{"untrusted certificate", "https://" + addr + "/noop", "", result.TLS, false},
		{"resets every stream", "https://" + resets + "/", fmt.Sprintf("      tls_config: {ca_file: %q}\n", resetsCA), result.Reset, false},
		{"version negotiation only", "https://" + negotiating + "/", "", result.Other, false},
		{"a flood of GOAWAY", "https://" + flooding + "/", fmt.Sprintf("      tls_config: {ca_file: %q}\n", floodingCA), result.Timeout, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			request := "      http3: true\n" + c.tls
			p := probeWith(t, c.url, request, "concurrency: [2]\nstep_duration: 1500ms")
			start, heap := time.Now(), heapBytes()
			r := mustRun(t, context.Background(), p, Options{})
			logRun(t, r)
			s := r.Steps[0]
			if s.Attempts == 0 || s.Errors[c.want.String()] != s.Attempts {
				t.Errorf("%d attempts, errors %v: want every one %s", s.Attempts, s.Errors, c.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the run took %v", took)
			}
			if grew := int64(heapBytes()) - int64(heap); c.heapBound && grew > 64<<20 {
				t.Errorf("the heap grew by %d MiB", grew>>20)
			}
		})
	}
}

// goawayFlood is an HTTP/3 server that answers no request: on every
// connection its control stream sends SETTINGS, then GOAWAY frames
// (RFC 9114, 7.2.6) as fast as the stream takes them, until the client
// goes. It returns its address and a CA file that trusts it.
func goawayFlood(t *testing.T) (addr, caFile string) {
	t.Helper()
	cert, err := target.LoopbackCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{http3.NextProtoH3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				control, err := conn.OpenUniStream()
				if err != nil {
					return
				}
				control.Write([]byte{0x00, 0x04, 0x00}) // a control stream, an empty SETTINGS
				for {
					if _, err := control.Write([]byte{0x07, 0x01, 0x00}); err != nil { // GOAWAY, stream 0
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), certFile(t, cert.Leaf.Raw)
}

// udpServer answers each datagram with what answer makes of it (nothing
// when nil), and returns its address.
func udpServer(t *testing.T, answer func([]byte) []byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := answer(buf[:n]); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// versionNegotiation answers a long-header packet with a Version
// Negotiation packet (RFC 9000, 17.2.1) that offers only a reserved
// version: no QUIC version the client speaks.
func versionNegotiation(in []byte) []byte {
	if len(in) < 7 || in[0]&0x80 == 0 {
		return nil
	}
	dcidLen := int(in[5])
	if len(in) < 7+dcidLen {
		return nil
	}
	dcid := in[6 : 6+dcidLen]
	scidLen := int(in[6+dcidLen])
	if len(in) < 7+dcidLen+scidLen {
		return nil
	}
	scid := in[7+dcidLen : 7+dcidLen+scidLen]
	out := []byte{0x80 | 0x40, 0, 0, 0, 0, byte(len(scid))}
	out = append(out, scid...)
	out = append(out, byte(len(dcid)))
	out = append(out, dcid...)
	return append(out, 0x1a, 0x2a, 0x3a, 0x4a)
}

// BenchmarkHTTP3Attempt is one GET of /noop over HTTP/3 on a kept QUIC
// connection to a quic-go server in the process: loadprobe's attempt, and
// a plain loop over quic-go's http3.Transport beside it (the server's CPU
// in both, the same for both).
func BenchmarkHTTP3Attempt(b *testing.B) {
	addr, ca := h3Server(b, target.New(target.Options{}))
	url := "https://" + addr + "/noop"
	p := probeWith(b, url, fmt.Sprintf("      http3: true\n      tls_config: {ca_file: %q}\n", ca), "concurrency: [1]")
	b.Run("loadprobe", func(b *testing.B) {
		w, err := newWorkload(context.Background(), p, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer w.close()
		u := attempter{w.newUser()}
		defer u.Close()
		b.ReportAllocs()
		cpu := testkit.CPUTime()
		for b.Loop() {
			if _, o := u.Do(time.Now().Add(5 * time.Second)); o != result.Success {
				b.Fatalf("outcome %v", o)
			}
		}
		testkit.ReportCPU(b, cpu)
	})
	b.Run("http3.Transport", func(b *testing.B) {
		rt := &http3.Transport{TLSClientConfig: p.Request.TLS.Clone()}
		defer rt.Close()
		b.ReportAllocs()
		cpu := testkit.CPUTime()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		testkit.ReportCPU(b, cpu)
	})
}

// heapBytes is the live heap after a collection.
func heapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
