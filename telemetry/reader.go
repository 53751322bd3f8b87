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
// resources over each step, and the target's live traffic.
type Reader struct {
	api v1.API
	rt  http.RoundTripper
	cfg *plan.Telemetry
}

// ReadBytes bounds the answer of one query: maxPoints of one series are
// about 300 KiB.
const ReadBytes = 8 << 20

// maxPoints bounds the points of one range query, below Prometheus's own
// limit of 11 000.
const maxPoints = 10000

// resolution is the shortest step between the points of a range query:
// fine enough that a step's window has a point within it of its end,
// whatever the grid of the query's points.
const resolution = 250 * time.Millisecond

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

// Window is a step's measured window.
type Window struct{ From, To time.Time }

// Saturation reads every resource over each of the windows, which ascend:
// a run's steps' measured windows. A resource's value in a window is the
// highest of its points there (each the highest series', the most
// saturated instance): one query per resource reads all the windows, its
// points a quarter of a second apart or more, the last at the end of the
// last window (docs/telemetry.md, "Saturation and the bottleneck"). A
// resource without a value in a window is left out of that window's map;
// the error names each query that failed.
func (r *Reader) Saturation(ctx context.Context, windows []Window) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(windows))
	for i := range out {
		out[i] = map[string]float64{}
	}
	if len(windows) == 0 {
		return out, nil
	}
	var errs []error
	for _, res := range r.cfg.Saturation {
		points, err := r.series(ctx, res.Query, windows[0].From, windows[len(windows)-1].To, math.Max)
		if err != nil {
			errs = append(errs, fmt.Errorf("resource %s: %w", res.Name, err))
			continue
		}
		for i, w := range windows {
			if v, ok := points.over(w); ok {
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
		return Live{}, errors.New("no sample in the peak window")
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

// over is the highest value of the points in w at least a second after
// it opens (an earlier one may read a sample scraped before it), or, in a
// window too short for one, the latest point within resolution of its
// end.
func (ps points) over(w Window) (float64, bool) {
	hi, seen := math.Inf(-1), false
	for _, p := range ps {
		if p.t.After(w.To) {
			break
		}
		if p.t.Sub(w.From) >= time.Second {
			hi, seen = max(hi, p.value), true
		}
	}
	if seen {
		return hi, true
	}
	for i := len(ps) - 1; i >= 0; i-- {
		if p := ps[i]; !p.t.After(w.To) {
			return p.value, w.To.Sub(p.t) < resolution
		}
	}
	return 0, false
}

// series runs query over [from, to] at a step of resolution or more (to
// stay within maxPoints), with a point at to, and merges the series' values
// at each point with merge. NaN values (a ratio over no traffic) are no
// values.
func (r *Reader) series(ctx context.Context, query string, from, to time.Time, merge func(a, b float64) float64) (points, error) {
	to = to.Truncate(time.Millisecond)
	step := max(resolution, to.Sub(from)/maxPoints).Truncate(time.Millisecond)
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
