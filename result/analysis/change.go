package analysis

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/loadprobe/loadprobe/result"
)

// Change points are found by E-Divisive means (Matteson and James, "A
// Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", 2014), as MongoDB's performance CI and Apache Otava
// find them: the split of a series that maximizes the energy distance
// between its two sides, kept when a permutation test finds it
// significant, then the same within each side (docs/measurement.md,
// "Capacity changes").
const (
	// changePermutations and changeSignificance: a split is kept when at
	// most 1 of 399 permutations of the series splits as far apart, p <=
	// 0.005; flat histories then show a change in 1 of 200.
	changePermutations = 399
	changeSignificance = 0.005
	// changeMinRuns is the fewest runs on either side of a change: a
	// change is seen from its third run on.
	changeMinRuns = 3
	// changeRecent is how many of the last runs the latest change must lie
	// in to be reported.
	changeRecent = 30
)

// LatestChange returns the latest change point of xs among its last
// changeRecent values, with the means of the segments on either side
// (each from the change before, to the end or the change after); nil when
// none is significant. The permutations are
// seeded by the series, so that one history always reads the same.
func LatestChange(xs []float64) *result.CapacityChange {
	points := ChangePoints(xs)
	if len(points) == 0 {
		return nil
	}
	at := points[len(points)-1]
	if len(xs)-at > changeRecent {
		return nil
	}
	from, to := 0, len(xs)
	if len(points) > 1 {
		from = points[len(points)-2]
	}
	before, after := mean(xs[from:at]), mean(xs[at:to])
	if before == 0 {
		return nil
	}
	return &result.CapacityChange{RunsAgo: len(xs) - at, Before: before, After: after}
}

// ChangePoints returns the indices at which xs changes its mean, in
// ascending order: each is the first index of a new segment.
func ChangePoints(xs []float64) []int {
	seed := uint64(len(xs))
	for _, x := range xs {
		seed = seed*1099511628211 ^ math.Float64bits(x)
	}
	rng := rand.New(rand.NewPCG(seed, 0x10adbe))
	var points []int
	var split func(lo, hi int)
	split = func(lo, hi int) {
		seg := xs[lo:hi]
		qs := energies(seg)
		at, q := bestOf(qs)
		if at < 0 || !significant(seg, q, rng) {
			return
		}
		split(lo, lo+at)
		if hi == len(xs) && unripe(qs, at) {
			return // seen once its changeMinRuns-th run has come
		}
		points = append(points, lo+at)
		split(lo+at, hi)
	}
	split(0, len(xs))
	slices.Sort(points)
	return points
}

// significant reports whether fewer than changeSignificance of random
// permutations of xs split as far apart as q.
func significant(xs []float64, q float64, rng *rand.Rand) bool {
	perm := slices.Clone(xs)
	beyond := 0
	for range changePermutations {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, pq := bestSplit(perm); pq >= q {
			beyond++
		}
	}
	return float64(beyond+1)/float64(changePermutations+1) <= changeSignificance
}

// bestSplit returns the split of xs, at least changeMinRuns from either
// end, whose two sides lie furthest apart by the energy statistic, and
// that statistic; -1 when xs is too short to split.
func bestSplit(xs []float64) (int, float64) {
	return bestOf(energies(xs))
}

// bestOf is bestSplit of the series whose energies are qs.
func bestOf(qs []float64) (int, float64) {
	n := len(qs)
	if n < 2*changeMinRuns {
		return -1, 0
	}
	best := changeMinRuns
	for t := best + 1; t <= n-changeMinRuns; t++ {
		if qs[t] > qs[best] {
			best = t
		}
	}
	return best, qs[best]
}

// energies returns, at each τ in [1, n), the energy statistic of the split
// of xs before xs[τ],
// Q(τ) = τ(n−τ)/n · (2·mean|x−y| − mean|x−x'| − mean|y−y'|), a side of
// one value having no spread; qs[0] is unused.
func energies(xs []float64) []float64 {
	n := len(xs)
	qs := make([]float64, n)
	// left: sum of |xi−xk| over pairs left of τ; right: right of it;
	// total: over all pairs. Moving xs[τ−1] left updates both in O(n).
	var total, left float64
	for i := range n {
		for k := i + 1; k < n; k++ {
			total += math.Abs(xs[i] - xs[k])
		}
	}
	right := total
	within := func(sum, k float64) float64 {
		if k < 2 {
			return 0
		}
		return sum / (k * (k - 1) / 2)
	}
	for t := 1; t < n; t++ {
		m := t - 1 // moves from the right side to the left
		for i := range m {
			left += math.Abs(xs[i] - xs[m])
		}
		for j := m + 1; j < n; j++ {
			right -= math.Abs(xs[m] - xs[j])
		}
		between := total - left - right
		a, b := float64(t), float64(n-t)
		qs[t] = a * b / (a + b) * (2*between/(a*b) - within(left, a) - within(right, b))
	}
	return qs
}

// unripe reports whether the split at of a series with energies qs lies at
// the last place a split may, while a later one, leaving fewer than
// changeMinRuns on the right, would part the series further: a change
// whose changeMinRuns-th run has not come yet, which the split would place
// too early, with runs from before it on its side.
func unripe(qs []float64, at int) bool {
	return at == len(qs)-changeMinRuns && slices.Max(qs[at+1:]) > qs[at]
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
