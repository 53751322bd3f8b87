package readback

import (
	"cmp"
	"slices"

	"github.com/loadprobe/loadprobe/result"
)

// nativeLatency is the fleet's latency quantiles from the shards' native
// histograms (loadprobe_step_latency_histogram_seconds), summed bucket by
// bucket as Prometheus's sum by (probe, level) sums them and read as its
// histogram_quantile reads a native histogram: the bucket where the
// quantile's rank falls, linearly within it. Its buckets are 0.54% wide,
// so each quantile is within 1% of the exact quantile of every shard's
// samples (docs/fleet.md, "Fleet figures (replica 0)"). The maximum is
// none of a histogram's: the caller keeps the summaries' exact one. False
// when a shard with a success has no native histogram: a Prometheus
// without native histograms, or a replica that exports none.
func nativeLatency(found []*part) (result.Latency, bool) {
	type bounds struct{ lower, upper float64 }
	sum := map[bounds]float64{}
	var count float64
	for _, pt := range found {
		switch {
		case pt.count == 0:
			continue
		case pt.native == nil:
			return result.Latency{}, false
		}
		for _, b := range pt.native.Buckets {
			sum[bounds{float64(b.Lower), float64(b.Upper)}] += float64(b.Count)
			count += float64(b.Count)
		}
	}
	if count == 0 {
		return result.Latency{}, false
	}
	buckets := make([]bounds, 0, len(sum))
	for b := range sum {
		buckets = append(buckets, b)
	}
	slices.SortFunc(buckets, func(a, b bounds) int { return cmp.Compare(a.upper, b.upper) })
	var l result.Latency
	for _, q := range result.Quantiles {
		if q.Q == 1 {
			continue // the maximum
		}
		rank, below := q.Q*count, 0.0
		for _, b := range buckets {
			n := sum[b]
			if below+n < rank {
				below += n
				continue
			}
			*q.Field(&l) = b.lower + (b.upper-b.lower)*(rank-below)/n
			break
		}
	}
	return l, true
}
