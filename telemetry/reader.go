package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/internal/promapi"
	"github.com/loadprobe/loadprobe/plan"
)

// Reader reads a probe's telemetry after a run: the saturation of its
// resources at the end of each step, and the target's live traffic.
type Reader struct {
	api v1.API
	rt  http.RoundTripper
	cfg *plan.Telemetry
}

// ReadBytes bounds the answer of one query: a week of one series at the
// points a read asks for is about 300 KiB.
const ReadBytes = 8 << 20

// maxPoints bounds the points of one range query, below Prometheus's own
// limit of 11 000.
const maxPoints = 10000

// NewReader returns a Reader of t's queries.
func NewReader(t *plan.Telemetry) (*Reader, error) {
	api, rt, err := promapi.New(t.Prometheus.URL, t.Prometheus.HTTPClientConfig, "telemetry", ReadBytes)
	if err != nil {
		return nil, err
	}
	return &Reader{api: api, rt: rt, cfg: t}, nil
}

// Close lets go of the connections to the Prometheus.
func (r *Reader) Close() {
	if c, ok := r.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Saturation reads every resource at each of the times at, which ascend:
// the ends of a run's measured windows. A resource's value is its highest
// series' (the most saturated instance); one query per resource reads
// all the times, at the latest point of a range query at most a second
// before each (docs/telemetry.md, "Saturation and the bottleneck"). A
// resource without a value at a time is left out of that time's map; the
// error names the first query that failed.
func (r *Reader) Saturation(ctx context.Context, at []time.Time) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(at))
	for i := range out {
		out[i] = map[string]float64{}
	}
	if len(at) == 0 {
		return out, nil
	}
	var errs []error
	for _, res := range r.cfg.Saturation {
		points, err := r.series(ctx, res.Query, at[0], at[len(at)-1], math.Max)
		if err != nil {
			errs = append(errs, fmt.Errorf("resource %s: %w", res.Name, err))
			continue
		}
		for i, t := range at {
			if v, ok := points.at(t); ok {
				out[i][res.Name] = v
			}
		}
	}
	return out, errors.Join(errs...)
}

// Live is the target's live traffic: its highest over the window ending
// now, and its value now (0 when it has none now).
type Live struct {
	Peak, Now float64
}

// Traffic reads the live traffic over the peak window ending at now: one
// range query, its series summed at each point (a query that forgot its
// sum reads as the target's whole traffic).
func (r *Reader) Traffic(ctx context.Context, now time.Time) (Live, error) {
	window := time.Duration(r.cfg.PeakWindow)
	now = now.Truncate(time.Millisecond) // Prometheus's resolution
	points, err := r.series(ctx, r.cfg.Traffic, now.Add(-window), now, func(a, b float64) float64 { return a + b })
	if err != nil {
		return Live{}, err
	}
	if len(points) == 0 {
		return Live{}, fmt.Errorf("no sample over the last %s", model.Duration(window))
	}
	var l Live
	for _, p := range points {
		l.Peak = max(l.Peak, p.value)
	}
	if last := points[len(points)-1]; last.t.Equal(now) {
		l.Now = last.value
	}
	return l, nil
}

type point struct {
	t     time.Time
	value float64
}

// points ascend in time.
type points []point

// at is the value of the latest point at or before t, within a second.
func (ps points) at(t time.Time) (float64, bool) {
	for i := len(ps) - 1; i >= 0; i-- {
		if p := ps[i]; !p.t.After(t) {
			return p.value, t.Sub(p.t) < time.Second
		}
	}
	return 0, false
}

// series runs query over [from, to] at a step of a second or more (to
// stay within maxPoints), to itself a point, and merges the series' values
// at each point with merge. NaN values (a ratio over no traffic) are no
// values.
func (r *Reader) series(ctx context.Context, query string, from, to time.Time, merge func(a, b float64) float64) (points, error) {
	to = to.Truncate(time.Millisecond)
	step := max(time.Second, to.Sub(from)/maxPoints).Truncate(time.Second)
	// Points fall at start + k·step: start at or before from, where one
	// falls on to.
	from = to.Add(-(to.Sub(from) + step - 1) / step * step)
	v, _, _, err := r.api.QueryRange(ctx, query, v1.Range{Start: from, End: to, Step: step})
	if err != nil {
		return nil, err
	}
	matrix, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("a %s result: the query must return an instant vector or a scalar", v.Type())
	}
	merged := map[model.Time]float64{}
	for _, s := range matrix {
		for _, p := range s.Values {
			f := float64(p.Value)
			if math.IsNaN(f) {
				continue
			}
			if m, ok := merged[p.Timestamp]; ok {
				f = merge(m, f)
			}
			merged[p.Timestamp] = f
		}
	}
	out := make(points, 0, len(merged))
	for ts, f := range merged {
		out = append(out, point{ts.Time(), f})
	}
	slices.SortFunc(out, func(a, b point) int { return a.t.Compare(b.t) })
	return out, nil
}
