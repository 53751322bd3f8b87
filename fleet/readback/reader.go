// Package readback reads a fleet's run back from Prometheus. The replicas of a
// fleet (--shard i/N) each send their share of every level and export the
// fleet's level on their step series; Prometheus scrapes them all. After
// each of its runs the replica with ordinal 0 queries every shard's step
// series of that run, sums them level by level and judges the sum with the
// rules one replica uses (docs/fleet.md, "Fleet figures (replica 0)"). loadprobe adds
// no coordinator: Prometheus is the only place the replicas meet.
package readback

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/internal/promapi"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Options say where the fleet's series are and how long to wait for them.
type Options struct {
	// Prometheus scrapes every replica; its selector picks this fleet's
	// series among the others it holds.
	fleet.Prometheus
	// Shards is the fleet's size N.
	Shards int
	// Wait bounds how long after its own run replica 0 waits for every
	// shard's last step to be scraped before it judges without them.
	Wait time.Duration
}

// pollEvery is how often the reader asks again while a shard's steps are
// not all scraped yet: about a scrape interval.
const pollEvery = time.Second

// Reader reads a fleet's runs back from Prometheus.
type Reader struct {
	api     v1.API
	opts    Options
	poll    time.Duration
	timeout time.Duration // bounds one read, both its queries
	logger  *slog.Logger
}

// New returns a Reader for the Prometheus o names; check Options.Selector
// with CheckSelector first.
func New(o Options, logger *slog.Logger) (*Reader, error) {
	query, _, err := promapi.New(o.URL, o.HTTPClientConfig, "fleet", promapi.MaxAnswerBytes)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Reader{api: query, opts: o, poll: pollEvery, timeout: promapi.QueryTimeout, logger: logger}, nil
}

// Judge reads the fleet's run that own, replica 0's run of p, was part of,
// and judges it. It asks until every shard's steps of the run are scraped
// or Options.Wait has passed (or ctx ends): then a shard still missing
// makes the run invalid, named in Problems.
func (r *Reader) Judge(ctx context.Context, p *plan.Probe, own result.Result) *result.Fleet {
	return r.until(ctx, p, own, time.Now().Add(r.opts.Wait), r.poll)
}

// stepPollEvery is how often Step asks again: a search's next step starts
// a settle allowance after the last, often two or three seconds.
const stepPollEvery = 200 * time.Millisecond

// Step reads the fleet's sum of own, a step of p this replica has just
// measured, for a fleet's search to choose its next level from (docs/fleet.md,
// "Fleet search"). It asks until every shard's figures of the step are in
// Prometheus or by has passed (or ctx ends): then a shard still missing is
// named in Problems. The figures of a finished step do not change, so
// every replica that reads them all reads the same sums.
func (r *Reader) Step(ctx context.Context, p *plan.Probe, own result.Step, by time.Time) *result.Fleet {
	run := result.Result{Name: p.Name, Mode: p.Load.Mode(), Protocol: p.Protocol(), Steps: []result.Step{own}}
	return r.until(ctx, p, run, by, min(r.poll, stepPollEvery))
}

// until reads own's fleet run, asking every poll until no shard is
// missing or giveUp.
func (r *Reader) until(ctx context.Context, p *plan.Probe, own result.Result, giveUp time.Time, poll time.Duration) *result.Fleet {
	for {
		f, err := r.read(ctx, p, own)
		if err != nil {
			f = unread(r.opts.Shards, err)
		}
		if f.Valid || len(f.Problems) == 0 || !time.Now().Add(poll).Before(giveUp) {
			return f
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return f
		case <-t.C:
		}
	}
}

// unread is the fleet's run when Prometheus could not be read: no shard
// is known to have taken part, so every one counts as missing and no
// figure is judged (a reading of nothing is no capacity of 0).
func unread(shards int, err error) *result.Fleet {
	f := &result.Fleet{Shards: shards, Steps: []result.Step{}, MissingShards: []int{},
		Problems: []string{"cannot read the fleet's steps from Prometheus: " + err.Error()}}
	for i := range shards {
		f.MissingShards = append(f.MissingShards, i)
	}
	return f
}

// read reads the run once and sums it, whatever shard is missing.
func (r *Reader) read(ctx context.Context, p *plan.Probe, own result.Result) (*result.Fleet, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	now := time.Now()
	info, err := r.query(ctx, fmt.Sprintf(`loadprobe_shard_info{shards="%d"%s}`, r.opts.Shards, r.opts.Matchers()), now)
	if err != nil {
		return nil, err
	}
	steps, err := r.query(ctx, fmt.Sprintf(`{__name__=~"loadprobe_step_.+",probe=%q%s}`, p.Name, r.opts.Matchers()), now)
	if err != nil {
		return nil, err
	}
	shards, rejected, problems := shardsOf(info, r.opts.Shards)
	ps, notNumbers := partsOf(steps, shards)
	for i, why := range notNumbers {
		if _, known := rejected[i]; !known {
			rejected[i] = why
		}
	}
	f := sum(p, own, r.opts.Shards, ps, rejected)
	if len(problems) > 0 {
		// A shard's share went out twice: the target took more than the
		// levels say, and no figure of the run describes them.
		f.PeakThroughput, f.BreakingPoints, f.ReachedUpTo, f.Capacity = 0, result.BreakingPoints{}, 0, nil
	}
	f.Problems = append(problems, f.Problems...)
	f.Valid = f.Valid && len(f.Problems) == 0
	return f, nil
}

func (r *Reader) query(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	v, _, _, err := r.api.Query(ctx, q, at)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: a %s, not an instant vector", q, v.Type())
	}
	return vec, nil
}
