package readback

import (
	"slices"

	"github.com/loadprobe/loadprobe/result"
)

// mixture is the fleet's latency distribution from the shards' step
// summaries. The shards' successful responses together are a mixture of
// theirs: its distribution function is the shards' own, weighted by their
// response counts. Each shard's function is known at its quantiles (p50 …
// max) and taken as linear between them (from 0 below p50); the fleet's
// quantile q is where the weighted sum reaches q. It is exact for one
// shard and for the maximum, and lies between the shards' own quantiles
// otherwise; a mean of the shards' quantiles would hide one saturated
// replica's tail. A shard without a successful response has no quantiles
// (NaN) and no weight. Mean is left to the caller, who has the exact sums.
func mixture(found []*part) result.Latency {
	found = slices.DeleteFunc(slices.Clone(found), func(pt *part) bool { return pt.count == 0 })
	var l result.Latency
	var total float64
	points := []float64{0}
	for _, pt := range found {
		total += pt.count
		for _, q := range result.Quantiles {
			points = append(points, pt.quantiles[q.Q])
		}
	}
	slices.Sort(points)
	cdf := func(x float64) float64 {
		var f float64
		for _, pt := range found {
			f += pt.count * shardCDF(pt, x)
		}
		return f / total
	}
	for _, q := range result.Quantiles {
		*q.Field(&l) = crossing(points, cdf, q.Q)
	}
	return l
}

// crossing is where cdf, linear between the sorted points, first reaches
// q. A point it reaches to within rounding is the answer itself: one
// shard's quantiles come back exactly.
func crossing(points []float64, cdf func(float64) float64, q float64) float64 {
	const rounding = 1e-9
	prevX, prevF := points[0], cdf(points[0])
	for _, x := range points[1:] {
		f := cdf(x)
		switch {
		case f >= q-rounding && f <= q+rounding:
			return x
		case f > q:
			return prevX + (x-prevX)*(q-prevF)/(f-prevF)
		}
		prevX, prevF = x, f
	}
	return points[len(points)-1]
}

// shardCDF is the share of a shard's responses at or below x, linear
// between its known quantiles.
func shardCDF(pt *part, x float64) float64 {
	prevQ, prevX := 0.0, 0.0
	for _, q := range result.Quantiles {
		qx := max(pt.quantiles[q.Q], prevX) // quantiles never decrease
		if x < qx {
			return prevQ + (q.Q-prevQ)*(x-prevX)/(qx-prevX)
		}
		prevQ, prevX = q.Q, qx
	}
	return 1
}
