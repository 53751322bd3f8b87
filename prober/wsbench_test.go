package prober

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/demo/target"
)

// BenchmarkWebSocketRoundTrips measures message round trips per CPU-second
// of this process against an echo server: loadprobe's closed loop (the
// engine, its recorders and the WebSocket Conn) beside a plain loop over
// gorilla/websocket with the same sessions, so their ratio is the
// generator's overhead over the bare library. `make bench` (bench.sh,
// scenario websocket) serves the echo from `loadprobe target` on another
// core and names it in LOADPROBE_BENCH_WS_URL; without it the demo target
// runs in this process and its CPU counts too.
func BenchmarkWebSocketRoundTrips(b *testing.B) {
	const sessions, hold = 8, 3 * time.Second
	url := os.Getenv("LOADPROBE_BENCH_WS_URL")
	if url == "" {
		srv := httptest.NewServer(target.New(target.Options{}))
		defer srv.Close()
		url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
		b.Logf("echo server in this process (LOADPROBE_BENCH_WS_URL unset): its CPU counts in cpu-s")
	}
	payload := []byte(`{"op":"ping","seq":1}`)
	b.Run("bare", func(b *testing.B) {
		measureRoundTrips(b, func() int64 { return bareLoop(b, url, payload, sessions, hold) })
	})
	b.Run("loadprobe", func(b *testing.B) {
		p := probeWith(b, url, fmt.Sprintf("      body: '%s'\n", payload), fmt.Sprintf("concurrency: [%d]\nstep_duration: %s", sessions, model.Duration(hold)))
		measureRoundTrips(b, func() int64 {
			r := mustRun(b, context.Background(), p, Options{})
			if len(r.Steps) != 1 || r.Steps[0].ErrorRatio != 0 {
				b.Fatalf("run %s (%s): %+v", r.Ended, r.Error, r.Steps)
			}
			return r.Steps[0].Attempts
		})
	})
}

// measureRoundTrips runs loop b.N times and reports the round trips it
// made per CPU-second of the process, per second, and the allocations per
// round trip.
func measureRoundTrips(b *testing.B, loop func() (roundTrips int64)) {
	var n int64
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu0 := processCPU()
	start := time.Now()
	for range b.N {
		n += loop()
	}
	wall := time.Since(start)
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(n)/cpu.Seconds(), "roundtrips/cpu-s")
	b.ReportMetric(float64(n)/wall.Seconds(), "roundtrips/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/roundtrip")
}

// bareLoop is the least a generator can do with gorilla/websocket: each of
// sessions goroutines sends and reads whole messages on its own session,
// with a deadline per round trip, for hold.
func bareLoop(b *testing.B, url string, payload []byte, sessions int, hold time.Duration) int64 {
	var total atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(hold)
	for range sessions {
		s, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			var n int64
			for now := time.Now(); now.Before(end); now = time.Now() {
				_ = s.SetWriteDeadline(now.Add(time.Second))
				_ = s.SetReadDeadline(now.Add(time.Second))
				if err := s.WriteMessage(websocket.TextMessage, payload); err != nil {
					b.Error(err)
					return
				}
				_, r, err := s.NextReader()
				if err == nil {
					_, err = io.Copy(io.Discard, r)
				}
				if err != nil {
					b.Error(err)
					return
				}
				n++
			}
			total.Add(n)
		}()
	}
	wg.Wait()
	return total.Load()
}
