package main

import "fmt"

// tolerance is how far the last third of a measure's samples may sit
// above the first third and still count as flat: abs plus rel times the
// first third's summary.
type tolerance struct {
	abs, rel float64
}

// verdict is one measure's finding over the samples after the warm-up.
type verdict struct {
	first, last float64 // medians of the first and the last third
	allowed     float64 // how far last may exceed first
	slopePerMin float64 // least-squares slope, per minute
	flat        bool
}

// judge decides whether xs (at minutes ts, after the warm-up) is flat: the
// summary (median or peak) of its last third is at most that of its first
// third plus the tolerance. A summary, not single samples: a sample taken
// while runs are under way holds their goroutines and connections, one
// taken between runs does not. Falling counts as flat; the slope is
// reported, not judged, since a short soak's slope is mostly noise.
func judge(ts, xs []float64, sum summary, tol tolerance) (verdict, error) {
	if len(xs) < 3 || len(ts) != len(xs) {
		return verdict{}, fmt.Errorf("%d samples after the warm-up: at least 3 are needed", len(xs))
	}
	third := len(xs) / 3
	v := verdict{
		first:       sum.of(xs[:third]),
		last:        sum.of(xs[len(xs)-third:]),
		slopePerMin: slope(ts, xs),
	}
	v.allowed = tol.abs + tol.rel*v.first
	v.flat = v.last-v.first <= v.allowed
	return v, nil
}

// slope is the least-squares slope of xs over ts.
func slope(ts, xs []float64) float64 {
	var mt, mx float64
	for i := range ts {
		mt += ts[i]
		mx += xs[i]
	}
	mt /= float64(len(ts))
	mx /= float64(len(xs))
	var num, den float64
	for i := range ts {
		num += (ts[i] - mt) * (xs[i] - mx)
		den += (ts[i] - mt) * (ts[i] - mt)
	}
	if den == 0 {
		return 0
	}
	return num / den
}
