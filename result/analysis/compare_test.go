package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// side is a run whose capacity level, 4 connections, served n whole
// seconds of goodput around capacity, each off by a relative deviation of
// cv.
func side(rng *rand.Rand, capacity, cv float64, n int) result.Result {
	s := result.Step{Level: 4, Attempts: 1, Latency: result.Latency{P99: 0.02 * 1000 / capacity}}
	var sum float64
	for i := range n {
		v := math.Round(capacity * (1 + cv*rng.NormFloat64()))
		s.PerSecond = append(s.PerSecond, result.Second{Second: i, Success: int64(v)})
		sum += v
	}
	return result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{s}, Capacity: &result.Point{Level: 4, Throughput: sum / float64(n)}}
}

// Calibration of docs/compare.md, "The verdict", on 1000 seeded pairs of
// 10 seconds each at the capacity level, each second's goodput 3% off at
// random: the 95% interval holds the true ratio in 93-97% of them; two
// copies of one target (A/A) fail in at most 5%, a candidate 10% slower
// fails in at least 95%, one 2% slower in at most 10%. (With 5 seconds a
// side a 10% loss fails in 68% only: the interval is wider.)
func TestVerdictCalibration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(34, 1))
	calibrate(t, []calibration{{"A/A", 1, 0, 0.05}, {"10% slower", 0.9, 0.95, 1}, {"2% slower", 0.98, 0, 0.10}},
		func(ratio float64) (bool, *[2]float64) {
			v := Judge(side(rng, 400, 0.03, 10), side(rng, 400*ratio, 0.03, 10), plan.DefaultCompare)
			return v.Verdict == result.VerdictFail, &v.Interval
		})
}

// calibration is a calibration case: a candidate at ratio of its
// baseline, failing in minFail to maxFail of the pairs.
type calibration struct {
	name             string
	ratio            float64
	minFail, maxFail float64
}

// calibrate judges 1000 pairs of each case with judge, which returns
// whether the pair failed and the interval (nil: none), and wants each
// case's fail share in its bounds and the interval to hold the true ratio
// in 93-97% of the pairs.
func calibrate(t *testing.T, cases []calibration, judge func(ratio float64) (bool, *[2]float64)) {
	t.Helper()
	const pairs = 1000
	for _, tc := range cases {
		failed, covered := 0, 0
		for range pairs {
			fail, in := judge(tc.ratio)
			if fail {
				failed++
			}
			if in != nil && in[0] <= tc.ratio && tc.ratio <= in[1] {
				covered++
			}
		}
		fail, coverage := float64(failed)/pairs, float64(covered)/pairs
		t.Logf("%s: fail in %.1f%%, the interval holds the true ratio in %.1f%%", tc.name, 100*fail, 100*coverage)
		if fail < tc.minFail || fail > tc.maxFail || coverage < 0.93 || coverage > 0.97 {
			t.Errorf("%s: fail in %.1f%% (want %.0f%%-%.0f%%), coverage %.1f%% (want 93%%-97%%)", tc.name, 100*fail, 100*tc.minFail, 100*tc.maxFail, 100*coverage)
		}
	}
}

// A baseline without a capacity judges nothing; a candidate without one
// fails; too few seconds give no interval.
func TestVerdictEdges(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	base := side(rng, 400, 0.03, 5)
	none := base
	none.Capacity = nil
	if v := Judge(none, base, plan.DefaultCompare); v.Verdict != result.VerdictInconclusive {
		t.Errorf("no baseline capacity: %+v, want inconclusive", v)
	}
	if v := Judge(base, none, plan.DefaultCompare); v.Verdict != result.VerdictFail {
		t.Errorf("no candidate capacity: %+v, want fail", v)
	}
	short := side(rng, 300, 0.03, 1)
	if v := Judge(base, short, plan.DefaultCompare); v.Verdict != result.VerdictInconclusive || v.Reason == "" || v.CapacityRatio > 0.8 {
		t.Errorf("one second: %+v, want inconclusive with a reason, ratio about 0.75", v)
	}
	if v := Judge(base, side(rng, 360, 0.03, 5), plan.DefaultCompare); v.LatencyRatio == nil || math.Abs(*v.LatencyRatio-400/360.0) > 0.01 {
		t.Errorf("latency ratio %v, want the candidate's p99 at level 4 over the baseline's, %.3f", v.LatencyRatio, 400/360.0)
	}
}

// latencySide is a step at 4 connections of n seconds of perSecond
// successes each, their latencies log-normal (median 20ms·scale, σ 0.3),
// every second's scaled by its own 3% at random as a second's GC or
// neighbour moves it: the step's p99 and each second's, as the recorder
// keeps them.
func latencySide(rng *rand.Rand, scale float64, n, perSecond int) *result.Step {
	s := &result.Step{Level: 4, Attempts: int64(n * perSecond)}
	all := make([]float64, 0, n*perSecond)
	for i := range n {
		second := make([]float64, perSecond)
		shift := 1 + 0.03*rng.NormFloat64()
		for j := range second {
			second[j] = 0.02 * scale * shift * math.Exp(0.3*rng.NormFloat64())
		}
		all = append(all, second...)
		s.PerSecond = append(s.PerSecond, result.Second{Second: i, Success: int64(perSecond), P99: quantile(second, 0.99)})
	}
	s.Latency.P99 = quantile(all, 0.99)
	return s
}

// quantile is xs's q-quantile, the nearest rank's; xs is sorted.
func quantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	return xs[int(math.Ceil(q*float64(len(xs))))-1]
}

// Calibration of the p99 interval (docs/compare.md, "The verdict") on
// 1000 seeded pairs of 10 seconds of 400 successes a side at the
// baseline's capacity level: the 95% interval holds the true ratio in
// 93-97% of them; two copies of one target fail in at most 5%, a
// candidate whose latencies are 25% higher fails in at least 95%, one 2%
// higher in at most 10% (max_latency_gain 0.1).
func TestLatencyVerdictCalibration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(34, 2))
	calibrate(t, []calibration{{"A/A", 1, 0, 0.05}, {"25% slower", 1.25, 0.95, 1}, {"2% slower", 1.02, 0, 0.10}},
		func(ratio float64) (bool, *[2]float64) {
			v := &result.Compare{}
			j := judgeLatency(v, latencySide(rng, 1, 10, 400), latencySide(rng, ratio, 10, 400), plan.DefaultCompare)
			return j.verdict == result.VerdictFail, v.LatencyInterval
		})
}
