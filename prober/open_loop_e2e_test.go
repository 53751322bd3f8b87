package prober

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// countingMuxer counts the Muxes the engine asks its transport for.
type countingMuxer struct {
	transport.Transport
	made atomic.Int64
}

func (c *countingMuxer) NewMux() (transport.Mux, error) {
	c.made.Add(1)
	return c.Transport.(transport.Muxer).NewMux()
}

// delayServer answers each request on a connection delay after it arrived.
func delayServer(delay time.Duration) func(net.Conn) {
	return func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			time.Sleep(delay)
			if _, err := io.WriteString(c, testkit.BenchResponse); err != nil {
				return
			}
		}
	}
}

// The event loops on real sockets and real time, over plain HTTP/1.1 and
// over TLS: 2 000 requests a second for 2s (the loops send from 1 000/s
// here, from 20 000/s by default) against a loopback server that answers
// each 5ms after it arrives. Every request is sent and answered, on
// connections the loops opened as the delay asked, and latency from the
// intended send time reads the delay, a tick's lateness and the round
// trip. A precision test, alone on the cores without the race detector
// (Makefile): under it, beside the package's other tests, the server in
// this process waited up to 10 ms for a core, as a target beside a
// generator-limited step does.
func TestPreciseEventLoopsReadTheServersDelay(t *testing.T) {
	const delay = 5 * time.Millisecond
	plain := testkit.NewServer(t, delayServer(delay))
	cert, err := target.LoopbackCertificate()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	overTLS := testkit.NewServer(t, func(c net.Conn) { delayServer(delay)(tls.Server(c, cfg)) })
	for _, c := range []struct {
		name, url, request string
		s                  *testkit.Server
	}{
		{"http", plain.URL, "", plain},
		{"https", "https" + strings.TrimPrefix(overTLS.URL, "http"),
			fmt.Sprintf("      tls_config: {ca_file: %q}\n", certFile(t, cert.Leaf.Raw)), overTLS},
	} {
		t.Run(c.name, func(t *testing.T) {
			readTheServersDelay(t, probeWith(t, c.url, c.request, "rate: [2000]\nstep_duration: 2s"), c.s, delay)
		})
	}
}

func readTheServersDelay(t *testing.T, p *plan.Probe, s *testkit.Server, delay time.Duration) {
	w, err := newWorkload(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &countingMuxer{Transport: w.(*request).t}
	w.(*request).t = client
	r := run(context.Background(), p, Options{loopsFrom: 1000}, w, time.Now())
	if len(r.Steps) != 1 || client.made.Load() == 0 {
		t.Fatalf("%d steps (%s: %s), %d event loops; want 1 step sent by the loops", len(r.Steps), r.Ended, r.Error, client.made.Load())
	}
	st := r.Steps[0]
	if st.Attempts != 4000 || st.Dropped != 0 || st.Responses[result.HTTPStatus(200)] != 4000 {
		t.Errorf("%d attempts, %d dropped, responses %v; want the 4000 scheduled, every one answered 200", st.Attempts, st.Dropped, st.Responses)
	}
	if p50 := time.Duration(st.Latency.P50 * float64(time.Second)); p50 < delay || p50 > delay+2*time.Millisecond {
		t.Errorf("p50 %v, want the server's %v and at most 2ms more", p50, delay)
	}
	t.Logf("p50 %.3fms p99 %.3fms, %d connections", st.Latency.P50*1e3, st.Latency.P99*1e3, s.Accepted.Load())
	// As many connections as the requests under way needed at the most
	// (rate × the longest latency), and a few for a tick's burst: not one
	// a request, nor fewer than rate × delay.
	if n, most := s.Accepted.Load(), int64(2000*st.Latency.Max)+10; n < 10 || n > most {
		t.Errorf("%d connections, want from 2000/s × 5ms = 10 to 2000/s × the longest latency + 10 = %d", n, most)
	}
	if st.Errors[result.Timeout.String()] != 0 {
		t.Errorf("errors %v", st.Errors)
	}
}
