package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// history is a seeded capacity history of n runs around 1000, whose level
// steps by step (-0.05: down 5%) from run at on, with noise from draw (a
// relative error).
func history(seed uint64, n, at int, step float64, draw func(*rand.Rand) float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	xs := make([]float64, n)
	for i := range xs {
		level := 1000.0
		if i >= at {
			level *= 1 + step
		}
		xs[i] = level * (1 + draw(rng))
	}
	return xs
}

// Noise of 3%: within ±3% (uniform), or with a standard deviation of 3%.
var (
	within3 = func(rng *rand.Rand) float64 { return 0.03 * (2*rng.Float64() - 1) }
	sigma3  = func(rng *rand.Rand) float64 { return 0.03 * rng.NormFloat64() }
)

// Calibration of docs/measurement.md, "Capacity changes", on 100 seeded
// histories of 60 runs, a 5% fall at run 40. In noise within ±3% it is
// found within 3 runs of where it happened in at least 95; in noise of a
// 3% standard deviation it is found in at least 95, but where it happened
// only to within the noise: 3 runs in about 90 (90.1% of 1000 histories;
// the maximum-likelihood split of a series known to hold one change, the
// best any method can place it, 91.6%), held here at 85. Flat histories
// show a change in at most 1 of 100 with either noise.
func TestChangePointsCalibration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		draw             func(*rand.Rand) float64
		placed, detected int
	}{
		{"noise within 3%", within3, 95, 95},
		{"noise of a 3% deviation", sigma3, 85, 95},
	} {
		placed, detected, flat := 0, 0, 0
		for seed := range uint64(100) {
			xs := history(seed, 60, 40, -0.05, tc.draw)
			if c := LatestChange(xs); c != nil && c.Ratio() < 1 {
				detected++
				if abs(len(xs)-c.RunsAgo-40) <= 3 {
					placed++
				}
			}
			if c := LatestChange(history(1000+seed, 60, 60, 0, tc.draw)); c != nil {
				flat++
			}
		}
		t.Logf("%s: a 5%% fall found in %d of 100 histories, within 3 runs of it in %d; flat histories with a change: %d of 100", tc.name, detected, placed, flat)
		if detected < tc.detected || placed < tc.placed || flat > 1 {
			t.Errorf("%s: a 5%% fall found in %d (want %d), within 3 runs in %d (want %d); %d flat histories with a change (want at most 1)",
				tc.name, detected, tc.detected, placed, tc.placed, flat)
		}
	}
}

// A fall three runs ago is seen, with the means on either side; one
// older than the last 30 runs is not reported; too short a history has
// none.
func TestLatestChange(t *testing.T) {
	t.Parallel()
	quiet := func(rng *rand.Rand) float64 { return 0.01 * rng.NormFloat64() }
	xs := append(history(7, 20, 20, 0, quiet), 400, 405, 398)
	c := LatestChange(xs)
	if c == nil || c.RunsAgo != 3 || c.Ratio() > 0.41 || c.Ratio() < 0.39 {
		t.Fatalf("change %+v, want 3 runs ago at about 0.4 of before", c)
	}
	old := append(history(8, 20, 20, 0, quiet), history(9, 40, 40, 0, quiet)...)
	for i := 20; i < len(old); i++ {
		old[i] *= 0.7
	}
	if c := LatestChange(old); c != nil {
		t.Errorf("a change 40 runs ago reported as %+v, want none among the last 30", c)
	}
	if c := LatestChange([]float64{1000, 1000, 500, 500, 500}); c != nil {
		t.Errorf("5 runs: change %+v, want none (3 runs a side at least)", c)
	}
}

// A fall two runs old is not yet seen, rather than placed a run early
// with a run from before it on its side (CI, stop 45: a ratio of 0.7 for a
// fall to 0.5); an older change stays the latest until the fall's third
// run.
func TestLatestChangeWaitsForAFallsThirdRun(t *testing.T) {
	t.Parallel()
	quiet := func(rng *rand.Rand) float64 { return 0.01 * rng.NormFloat64() }
	steady := history(7, 20, 20, 0, quiet)
	if c := LatestChange(append(slices.Clone(steady), 500, 498)); c != nil {
		t.Errorf("a fall 2 runs old: change %+v, want none yet", c)
	}
	if c := LatestChange(append(slices.Clone(steady), 500, 498, 503)); c == nil || c.RunsAgo != 3 || c.Ratio() < 0.49 || c.Ratio() > 0.51 {
		t.Errorf("a fall 3 runs old: change %+v, want 3 runs ago at about 0.5 of before", c)
	}
	older := append(slices.Clone(steady), 700, 702, 698, 701, 699, 700, 350, 351)
	if c := LatestChange(older); c == nil || c.RunsAgo != 8 {
		t.Errorf("a change 8 runs ago and a fall 2 runs old: latest change %+v, want the one 8 runs ago", c)
	}
}

func abs(x int) int { return max(x, -x) }
