package prober

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/result"
)

// BenchmarkOpenLoopCPU sets the open loop's CPU per request beside the
// closed loop's, side by side in one process and one run: the closed loop
// at 50 connections first (the reference), then the open loop at 20k req/s
// and at 0.8× and 1.5× the rate the closed loop reached. Each reports CPU
// µs per request (getrusage, the whole process), the rate it achieved, the
// share of its schedule it sent, its CPU per request over the closed
// loop's (x-closed), and its latency's p50 and p99 (the open loop's from
// the intended send time; the last run's). Last, closed-1: the closed loop
// at one connection, which waits idle for every answer (9k–20k req/s
// against nginx in bench/BENCH.md's runs, near the open loop's 20k): the
// cost of a generator that sleeps between requests, which an open loop at
// such rates pays too ("The open loop at the closed loop's cost"). `make
// bench` runs it pinned to one core against nginx on the other, named in
// LOADPROBE_BENCH_HTTP_URL; without it a minimal server runs in this
// process and its CPU counts too.
func BenchmarkOpenLoopCPU(b *testing.B) {
	url := os.Getenv("LOADPROBE_BENCH_HTTP_URL")
	if url == "" {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
		defer srv.Close()
		url = srv.URL
		b.Logf("server in this process (LOADPROBE_BENCH_HTTP_URL unset): its CPU counts in cpu-µs/req")
	}
	const hold = 3 * time.Second
	var closedCPU, closedRate float64 // per request, and req/s
	b.Run("closed", func(b *testing.B) {
		closedCPU, closedRate = measureLoad(b, url, fmt.Sprintf("concurrency: [50]\nstep_duration: %s", model.Duration(hold)), 0, 0)
	})
	for _, open := range []struct {
		name     string
		rate     func() float64
		overload bool
	}{
		{"open-20k", func() float64 { return 20000 }, false},
		{"open-0.8x", func() float64 { return 0.8 * closedRate }, false},
		{"open-1.5x", func() float64 { return 1.5 * closedRate }, true},
	} {
		b.Run(open.name, func(b *testing.B) {
			rate := open.rate()
			if rate == 0 {
				b.Skip("no closed-loop rate to offer a share of (run the closed sub-benchmark too)")
			}
			measureLoad(b, url, fmt.Sprintf("rate: [1]\nstep_duration: %s", model.Duration(hold)), rate, closedCPU)
		})
	}
	b.Run("closed-1", func(b *testing.B) {
		measureLoad(b, url, fmt.Sprintf("concurrency: [1]\nstep_duration: %s", model.Duration(hold)), 0, closedCPU)
	})
}

// measureLoad runs a probe of load b.N times (rate, when not 0, in place of
// its rate: beyond max_rate's default) and reports its figures; it returns
// the CPU per request and the rate achieved.
func measureLoad(b *testing.B, url, load string, rate, closedCPU float64) (cpuPerRequest, achieved float64) {
	p := probeFor(b, url, load)
	if rate > 0 {
		p.Load.Rate = []float64{rate}
	}
	var attempts, dropped int64
	var wall time.Duration
	var latency result.Latency
	cpu0 := processCPU()
	for range b.N {
		r := mustRun(b, context.Background(), p, Options{})
		if len(r.Steps) != 1 {
			b.Fatalf("run %s (%s): %d steps", r.Ended, r.Error, len(r.Steps))
		}
		s := r.Steps[0]
		attempts, dropped, latency = attempts+s.Attempts, dropped+s.Dropped, s.Latency
		wall += time.Duration(s.DurationSeconds * float64(time.Second))
	}
	cpu := processCPU() - cpu0
	cpuPerRequest = float64(cpu.Microseconds()) / float64(attempts)
	achieved = float64(attempts) / wall.Seconds()
	b.ReportMetric(cpuPerRequest, "cpu-µs/req")
	b.ReportMetric(achieved, "req/s")
	if rate > 0 {
		b.ReportMetric(float64(attempts)/float64(attempts+dropped), "sent/scheduled")
		b.ReportMetric(rate, "offered/s")
	}
	if closedCPU > 0 {
		b.ReportMetric(cpuPerRequest/closedCPU, "x-closed")
	}
	b.ReportMetric(latency.P50*1e3, "p50-ms")
	b.ReportMetric(latency.P99*1e3, "p99-ms")
	return cpuPerRequest, achieved
}
