// Command soak is `make soak`: it runs the real loadprobe daemon with many
// probes against the demo target for minutes, samples the daemon's
// goroutines, RSS, heap, open fds and series count from /metrics, prints them
// and says whether each stayed flat, and writes the result to bench/SOAK.md.
// It exits 1 when a measure grew.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type params struct {
	probes, hosts    int
	duration, every  time.Duration
	scheduleInterval time.Duration
	out              string
}

func main() {
	var p params
	flag.IntVar(&p.probes, "probes", 30, "number of probes, of mixed kinds")
	flag.IntVar(&p.hosts, "hosts", 3, "demo targets, one per loopback address (127.0.0.1, .2, …): the scheduler runs one probe per host at a time")
	flag.DurationVar(&p.duration, "duration", 10*time.Minute, "how long the soak samples")
	flag.DurationVar(&p.every, "interval", 10*time.Second, "time between two samples")
	flag.DurationVar(&p.scheduleInterval, "schedule", 30*time.Second, "the probes' schedule.interval")
	flag.StringVar(&p.out, "out", "bench/SOAK.md", "where the result is written as Markdown (empty: nowhere)")
	flag.Parse()
	os.Exit(run(p))
}

// run returns the exit code: 0 when every measure is flat, 1 when one is
// not, 2 when the soak could not run. Every process it starts is stopped
// before it returns, Ctrl-C included.
func run(p params) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "loadprobe-soak-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	defer os.RemoveAll(dir)

	rev := revision()
	fleet, err := startFleet(ctx, p, dir)
	if fleet != nil {
		defer fleet.stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	fmt.Printf("soak: %d probes on %d targets for %v, a sample every %v (log while it runs: %s)\n",
		p.probes, p.hosts, p.duration, p.every, fleet.logPath)
	samples, err := sampleFor(ctx, fleet, p)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "soak: interrupted; no result written")
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		fmt.Fprint(os.Stderr, fleet.logTail())
		return 2
	}
	res, err := analyse(p, rev, samples)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	res.print(os.Stdout)
	if p.out != "" {
		if err := os.WriteFile(p.out, []byte(res.markdown()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			return 2
		}
		fmt.Println("soak: written to", p.out)
	}
	if !res.flat() {
		return 1
	}
	return 0
}

// sampleFor scrapes the daemon every p.every for p.duration, printing each
// sample as it comes.
func sampleFor(ctx context.Context, f *fleet, p params) ([]sample, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	var samples []sample
	printRow(os.Stdout, columns())
	for {
		s, err := scrape(ctx, client, f.metricsURL)
		if err != nil {
			return nil, fmt.Errorf("scraping the daemon: %w", err)
		}
		s.at = time.Since(start).Round(time.Second)
		samples = append(samples, s)
		printRow(os.Stdout, cells(s))
		if time.Since(start) >= p.duration {
			return samples, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-f.daemon.done:
			return nil, fmt.Errorf("the daemon ended early: %v", f.daemon.err)
		case <-tick.C:
		}
	}
}
