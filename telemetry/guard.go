package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/internal/promapi"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// Watcher evaluates one probe's Prometheus guards through one run.
type Watcher struct {
	api      v1.API
	rt       http.RoundTripper
	cfg      *plan.PrometheusGuard
	interval time.Duration
	live     live.Guards
	// over counts each query's consecutive evaluations outside its range.
	over []int

	cancel context.CancelFunc
	done   chan struct{}
}

// EvaluationBytes bounds the answers of one evaluation, all of a guard's
// queries together: each is a handful of samples, and its share of the
// bound is still thousands of series.
const EvaluationBytes = 8 << 20

// NewWatcher returns a Watcher of g's queries; sink takes their evaluations.
func NewWatcher(g *plan.PrometheusGuard, sink live.Guards) (*Watcher, error) {
	query, rt, err := promapi.New(g.URL, g.HTTPClientConfig, "guard", EvaluationBytes/int64(max(1, len(g.Queries))))
	if err != nil {
		return nil, err
	}
	if sink == nil {
		sink = live.NopGuards{}
	}
	return &Watcher{api: query, rt: rt, cfg: g, interval: time.Duration(g.Interval), live: sink,
		over: make([]int, len(g.Queries)), done: make(chan struct{})}, nil
}

// Start evaluates every query once before it returns, so that a target
// already unhealthy gets no load, then again every interval until Stop or
// ctx ends. stop is called at most once, with the abort of the first guard
// that fires.
func (w *Watcher) Start(ctx context.Context, stop func(result.Abort)) {
	ctx, w.cancel = context.WithCancel(ctx)
	if a, fired := w.evaluate(ctx); fired {
		stop(a)
		close(w.done)
		return
	}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(w.interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if a, fired := w.evaluate(ctx); fired && ctx.Err() == nil {
				stop(a)
				return
			}
		}
	}()
}

// Stop ends the evaluations and waits for the one under way; a nil
// Watcher (a probe without Prometheus guards) has none.
func (w *Watcher) Stop() {
	if w == nil {
		return
	}
	if w.cancel != nil {
		w.cancel()
		<-w.done
	}
	if c, ok := w.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// evaluate asks every query at once, each bounded by the interval, and
// returns the abort of the first (in config order) that has been outside
// its range for its `for` evaluations.
func (w *Watcher) evaluate(ctx context.Context) (result.Abort, bool) {
	values := make([]float64, len(w.cfg.Queries))
	errs := make([]error, len(w.cfg.Queries))
	var wg sync.WaitGroup
	for i, q := range w.cfg.Queries {
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, w.interval)
			defer cancel()
			values[i], errs[i] = w.query(qctx, q)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return result.Abort{}, false // stopped: a canceled query is no answer
	}
	var first *result.Abort
	for i, q := range w.cfg.Queries {
		outside := false
		if errs[i] != nil {
			w.live.GuardError(q.Name)
			if w.cfg.OnError == plan.OnErrorIgnore {
				continue
			}
			outside = true // on_error abort: a guard that cannot see counts as breached
		} else {
			outside = q.Outside(values[i])
			w.live.Guard(q.Name, values[i], outside)
		}
		if !outside {
			w.over[i] = 0
			continue
		}
		if w.over[i]++; w.over[i] >= q.For && first == nil {
			first = &result.Abort{By: result.ByPrometheus, Guard: q.Name, Value: values[i]}
		}
	}
	if first == nil {
		return result.Abort{}, false
	}
	return *first, true
}

// errNoSample is a query's answer without a number to judge.
var errNoSample = errors.New("no sample")

// query runs q now and returns its value: a scalar's, or of an instant
// vector the series that breaks q's range most (docs/guards.md,
// "Prometheus guards"). NaN samples (a ratio over no traffic) are no samples.
func (w *Watcher) query(ctx context.Context, q plan.GuardQuery) (float64, error) {
	v, _, _, err := w.api.Query(ctx, q.Query, time.Now())
	if err != nil {
		return 0, err
	}
	var samples []float64
	switch v := v.(type) {
	case *model.Scalar:
		samples = []float64{float64(v.Value)}
	case model.Vector:
		for _, s := range v {
			samples = append(samples, float64(s.Value))
		}
	default:
		return 0, fmt.Errorf("a %s result: the query must return an instant vector or a scalar", v.Type())
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	for _, s := range samples {
		if !math.IsNaN(s) {
			hi, lo = max(hi, s), min(lo, s)
		}
	}
	switch {
	case math.IsInf(hi, -1):
		return 0, errNoSample
	case q.Max != nil && hi > *q.Max, q.Min == nil:
		return hi, nil
	case q.Min != nil && lo < *q.Min, q.Max == nil:
		return lo, nil
	}
	return hi, nil
}
