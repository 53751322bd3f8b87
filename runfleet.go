package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/daemon"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/fleet/readback"
	"github.com/loadprobe/loadprobe/internal/promapi"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// A one-shot fleet is N `loadprobe run --shard=i/N` processes given the
// fleet's Prometheus, as the pods of an Indexed Job run them
// (docs/fleet.md, "A one-shot fleet"). Each serves its metrics for that
// Prometheus to scrape; they start together on a boundary each computes
// from what Prometheus holds of them all; replica 0 judges the fleet's
// runs as the daemon's replica 0 does, prints them and exits by their
// expectations, while the others serve their steps until it is gone.
const (
	// fleetGrid spaces the starts the replicas agree on.
	fleetGrid = 10 * time.Second
	// gatherFor bounds the wait for every replica to show in Prometheus:
	// a Job's pods may wait for nodes.
	gatherFor = 10 * time.Minute
	// askEvery is how often a replica asks Prometheus while it waits.
	askEvery = time.Second
)

// oneShot is this process's part of a one-shot fleet.
type oneShot struct {
	shard   fleet.Shard
	prom    *fleet.Prometheus
	wait    time.Duration // --fleet.wait
	listen  string        // --web.listen-address
	api     v1.API
	reader  *readback.Reader // the fleet's steps for a search; replica 0 judges the runs
	results runResults
}

// newOneShot is the one-shot fleet that --shard and --fleet.* make of this
// run: nil for a lone run, or a shard without the fleet's Prometheus
// (which runs its share alone, as before).
func newOneShot(shard fleet.Shard, o daemon.FleetOptions, listen string) (*oneShot, error) {
	fleetRun := shard.Replicas() > 1 && o.PrometheusURL != ""
	switch {
	case !fleetRun && listen != "":
		return nil, errors.New("loadprobe run: --web.listen-address serves a one-shot fleet's replica: it needs --shard i/N (N > 1) and --fleet.prometheus-url")
	case !fleetRun:
		return nil, nil
	case listen == "":
		return nil, errors.New("loadprobe run: --shard with --fleet.prometheus-url needs --web.listen-address, where the fleet's Prometheus scrapes this replica")
	}
	prom, err := o.Prometheus()
	if err != nil {
		return nil, fmt.Errorf("loadprobe run: %w", err)
	}
	api, _, err := promapi.New(prom.URL, prom.HTTPClientConfig, "fleet", promapi.MaxAnswerBytes)
	if err != nil {
		return nil, fmt.Errorf("loadprobe run: %w", err)
	}
	fl := &oneShot{shard: shard, prom: prom, wait: o.Wait, listen: listen, api: api}
	if fl.reader, err = readback.New(readback.Options{Prometheus: *prom, Shards: shard.Replicas(), Wait: o.Wait}, nil); err != nil {
		return nil, fmt.Errorf("loadprobe run: %w", err)
	}
	return fl, nil
}

// serve serves reg's families, with the runs' step and fleet families and
// the shard's, on --web.listen-address until stop.
func (o *oneShot) serve(reg *prometheus.Registry, probes []*plan.Probe, configHash string) (stop func(), err error) {
	o.results.probes = make([]state.Probe, len(probes))
	for i, p := range probes {
		o.results.probes[i].Probe = p
	}
	collector.RegisterResults(reg, &o.results)
	collector.RegisterFleet(reg, &o.results, o.shard)
	collector.RegisterShard(reg, o.shard, func() string { return configHash })
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return nil, fmt.Errorf("loadprobe run: --web.listen-address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends with Close
	return func() { srv.Close() }, nil
}

// gather waits until the fleet's Prometheus holds every replica, and
// returns the start of the fleet's first run: the first boundary of
// fleetGrid at least --fleet.wait after the last replica was first
// scraped, which every replica computes alike once it sees them all. A
// replica that sees them all only after that start fails: it would start
// late.
func (o *oneShot) gather(ctx context.Context, stderr io.Writer) (time.Time, error) {
	n, m := o.shard.Replicas(), o.prom.Matchers()
	count := fmt.Sprintf(`count(loadprobe_shard_info{shards="%d"%s})`, n, m)
	// Each replica's first scrape: a time every replica reads alike from
	// Prometheus, where a process's start time read from /proc can lie
	// seconds off the wall clock on a VM.
	lastScraped := fmt.Sprintf(`max(min_over_time(timestamp(loadprobe_shard_info{shards="%d"%s})[%s:1s]))`, n, m, model.Duration(gatherFor+5*time.Minute))
	fmt.Fprintf(stderr, "replica %s: waiting for the fleet's %d replicas in %s\n", o.shard, n, o.prom.URL)
	giveUp := time.Now().Add(gatherFor)
	var seen float64
	for {
		c, err := o.scalar(ctx, count)
		seen = max(seen, c)
		if err == nil && c >= float64(n) {
			var scraped float64
			if scraped, err = o.scalar(ctx, lastScraped); err == nil {
				last := time.UnixMilli(int64(scraped * 1e3))
				at := fleet.Boundary(last.Add(o.wait), fleetGrid)
				if time.Until(at) <= 0 {
					return time.Time{}, fmt.Errorf("the fleet's start at %s passed before this replica saw every replica, %.1fs after the last was first scraped: --fleet.wait (%s) must outlast a scrape and a query",
						at.Format(time.RFC3339), time.Since(last).Seconds(), o.wait)
				}
				return at, nil
			}
		}
		if !time.Now().Before(giveUp) {
			return time.Time{}, fmt.Errorf("%g of the fleet's %d replicas in %s after %s (last error: %v)", seen, n, o.prom.URL, gatherFor, err)
		}
		if !sleepCtx(ctx, askEvery) {
			return time.Time{}, ctx.Err()
		}
	}
}

// scalar is the value of q's one sample now; an error without one.
func (o *oneShot) scalar(ctx context.Context, q string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, promapi.QueryTimeout)
	defer cancel()
	v, _, _, err := o.api.Query(ctx, q, time.Now())
	if err != nil {
		return 0, err
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) != 1 {
		return 0, fmt.Errorf("%s: no single sample", q)
	}
	return float64(vec[0].Value), nil
}

// finish judges the fleet's runs on replica 0, each read back from
// Prometheus into its result's fleet; the other replicas serve their
// steps until replica 0 is gone from Prometheus, for at most twice
// --fleet.wait and a minute.
func (o *oneShot) finish(ctx context.Context, probes []*plan.Probe, results []result.Result) {
	if o.shard.Index == 0 {
		for i, r := range results {
			if r.Fleet == nil { // a fleet's search read its fleet's run as it went
				results[i].Fleet = o.reader.Judge(ctx, probes[i], r)
			}
		}
		return
	}
	zero := fmt.Sprintf(`count(loadprobe_shard_info{shard="0",shards="%d"%s})`, o.shard.Replicas(), o.prom.Matchers())
	giveUp := time.Now().Add(2*o.wait + time.Minute)
	for time.Now().Before(giveUp) && sleepCtx(ctx, askEvery) {
		if _, err := o.scalar(ctx, zero); err != nil {
			return // no sample: replica 0 is gone
		}
	}
}

// code is the exit code of a replica of the fleet: replica 0's 1 when a
// fleet's run misses a shard or an expectation, another's 1 when a run of
// its own failed; else 0.
func (o *oneShot) code(probes []*plan.Probe, results []result.Result) int {
	for i, r := range results {
		held := r.Ended == result.ResultCompleted || r.Ended == result.ResultAborted
		if o.shard.Index == 0 {
			held = r.Fleet != nil && len(r.Fleet.MissingShards) == 0 && expectationsHold(probes[i], fleetView(r))
		}
		if !held {
			return exitExpect
		}
	}
	return exitOK
}

// fleetView is r as its fleet ran it: the summed steps and what they were
// judged to be, without what r's own share says.
func fleetView(r result.Result) result.Result {
	f := r.Fleet
	if f == nil {
		return r
	}
	return result.Result{Name: r.Name, Mode: r.Mode, Protocol: r.Protocol, Ended: r.Ended, Started: r.Started,
		DurationSeconds: r.DurationSeconds, Steps: f.Steps, PeakThroughput: f.PeakThroughput,
		BreakingPoints: f.BreakingPoints, ReachedUpTo: f.ReachedUpTo, Capacity: f.Capacity,
		Valid: f.Valid, Diagnosis: f.Problems, Abort: r.Abort, Error: r.Error}
}

// runResults is the collector's source of a one-shot fleet's runs: each
// probe's run under way, and its last.
type runResults struct {
	mu     sync.Mutex
	probes []state.Probe
}

func (s *runResults) Snapshot() []state.Probe {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.probes)
}

// set makes run probe i's run under way (running) or its last.
func (s *runResults) set(i int, run result.Result, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if running {
		s.probes[i].Current = &run
		return
	}
	s.probes[i].Current, s.probes[i].Last = nil, &run
}

// sleepCtx sleeps d, and reports false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
