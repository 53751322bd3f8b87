package prober

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

func approx(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

func TestStatsHandBuiltSequence(t *testing.T) {
	r := newStepRecorder(0, false)
	ms := time.Millisecond
	// Second 0: three successes, one 503.
	r.record(result.Success, result.HTTPStatus(200), 10*ms, 100*ms)
	r.record(result.Success, result.HTTPStatus(200), 20*ms, 200*ms)
	r.record(result.Success, result.HTTPStatus(201), 30*ms, 900*ms)
	r.record(result.HTTPError, result.HTTPStatus(503), 40*ms, 950*ms)
	// Second 1: one success, one timeout, one refused.
	r.record(result.Success, result.HTTPStatus(200), 100*ms, 1500*ms)
	r.record(result.Timeout, result.Code{}, time.Second, 1600*ms)
	r.record(result.Refused, result.Code{}, 0, 1700*ms)
	// Second 2 is empty; the partial second 3 (the window is 3.5s) holds one reset.
	r.record(result.Reset, result.Code{}, 0, 3200*ms)
	// The engine adds each attempt's held time (see TestLoadHeldCountsHeldTime).
	r.held = 7 * time.Second

	st := r.summarize(4, "", 3500*ms, true)

	if st.Level != 4 || st.DurationSeconds != 3.5 {
		t.Errorf("level, duration = %v, %v", st.Level, st.DurationSeconds)
	}
	if st.Attempts != 8 {
		t.Errorf("attempts = %d, want 8", st.Attempts)
	}
	if want := 5.0 / 3.5; !approx(st.Throughput, want, 1e-12) {
		t.Errorf("throughput = %v, want %v", st.Throughput, want)
	}
	if want := 4.0 / 3.5; !approx(st.Goodput, want, 1e-12) {
		t.Errorf("goodput = %v, want %v", st.Goodput, want)
	}
	if want := 4.0 / 8; st.ErrorRatio != want {
		t.Errorf("error ratio = %v, want %v", st.ErrorRatio, want)
	}
	// Latency is over the four successful responses only: 10, 20, 30, 100
	// ms; the 503's 40 ms is the error latency.
	if want := 0.040; !approx(st.Latency.Mean, want, 1e-12) {
		t.Errorf("mean = %v, want %v", st.Latency.Mean, want)
	}
	if st.Latency.Max != 0.1 {
		t.Errorf("max = %v, want 0.1", st.Latency.Max)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p50", st.Latency.P50, 0.020},
		{"p90", st.Latency.P90, 0.100},
		{"p99", st.Latency.P99, 0.100},
		{"p999", st.Latency.P999, 0.100},
	} {
		if !approx(c.got, c.want, 0.01) {
			t.Errorf("%s = %v, want %v within 1%%", c.name, c.got, c.want)
		}
	}
	if want := (result.Codes{result.HTTPStatus(200): 3, result.HTTPStatus(201): 1, result.HTTPStatus(503): 1}); !maps.Equal(st.Responses, want) {
		t.Errorf("responses = %v, want %v", st.Responses, want)
	}
	if want := (result.Codes{result.HTTPStatus(503): 1}); !maps.Equal(st.HTTPErrors, want) {
		t.Errorf("http_errors = %v, want %v", st.HTTPErrors, want)
	}
	if el := st.ErrorLatency; el == nil || !approx(el.Mean, 0.040, 1e-12) || el.Max != 0.040 || !approx(el.P50, 0.040, 0.01) {
		t.Errorf("error latency = %+v, want the 503's 40ms", el)
	}
	if want := map[string]int64{"timeout": 1, "refused": 1, "reset": 1, "tls": 0, "dns": 0, "other": 0, "closed": 0, "generator": 0, "request_too_large": 0, "script_failed": 0, "script": 0}; !maps.Equal(st.Errors, want) {
		t.Errorf("errors = %v, want %v", st.Errors, want)
	}
	// Little's law is over every response: (10+20+30+40+100)/5 ms.
	if want := st.Throughput * 0.040; !approx(st.InFlight, want, 1e-12) {
		t.Errorf("in flight = %v, want %v", st.InFlight, want)
	}
	if want := 7 / 3.5 / 4; !approx(st.LoadHeldRatio, want, 1e-12) {
		t.Errorf("load held = %v, want the held time over 4 connections × 3.5s, %v", st.LoadHeldRatio, want)
	}
	wantSeconds := []result.Second{{Second: 0, Success: 3, Failure: 1}, {Second: 1, Success: 1, Failure: 2}, {Second: 2}}
	if !slices.Equal(st.PerSecond, wantSeconds) {
		t.Errorf("per second = %v, want %v (the partial last second dropped)", st.PerSecond, wantSeconds)
	}

	open := r.summarize(2, "", 3500*ms, false)
	if want := 8 / 3.5 / 2; !approx(open.LoadHeldRatio, want, 1e-12) {
		t.Errorf("open-loop load held = %v, want sent/offered %v", open.LoadHeldRatio, want)
	}
}

func TestStatsOutcomesAddUpToAttempts(t *testing.T) {
	r := newStepRecorder(0, false)
	rng := rand.New(rand.NewPCG(1, 2))
	var n int64
	for i := 0; i < 10000; i++ {
		o := result.Outcome(rng.IntN(int(result.NumOutcomes)))
		var code result.Code
		switch o {
		case result.Success:
			code = result.HTTPStatus(200)
		case result.HTTPError:
			code = result.HTTPStatus(500 + rng.IntN(5))
		}
		r.record(o, code, time.Duration(rng.IntN(1e8)), time.Duration(rng.Int64N(int64(5*time.Second))))
		n++
	}
	st := r.summarize(8, "", 5*time.Second, true)
	var sum int64
	for _, v := range st.Responses {
		sum += v
	}
	for _, v := range st.Errors {
		sum += v
	}
	if sum != n || st.Attempts != n {
		t.Errorf("responses + errors = %d, attempts = %d, want %d", sum, st.Attempts, n)
	}
	// A script's own error is neither a success nor the target's failure
	// (docs/scripts.md).
	var ps int64
	for _, s := range st.PerSecond {
		ps += s.Success + s.Failure
	}
	own := st.Errors[result.Script.String()]
	if ps != n-own || own == 0 {
		t.Errorf("per-second counts add up to %d, want %d attempts less %d script errors", ps, n, own)
	}
	successes := int64(math.Round(st.Goodput * 5))
	if want := float64(n-successes-own) / float64(n); !approx(st.ErrorRatio, want, 1e-12) {
		t.Errorf("error ratio = %v, want %v", st.ErrorRatio, want)
	}
}

// docs/design.md, "Failures divided by attempts": not by responses.
func TestStatsOnlyRefused(t *testing.T) {
	r := newStepRecorder(0, false)
	for i := 0; i < 1000; i++ {
		r.record(result.Refused, result.Code{}, 0, time.Duration(i)*5*time.Millisecond)
	}
	st := r.summarize(16, "", 5*time.Second, true)
	if st.ErrorRatio != 1 {
		t.Errorf("error ratio = %v, want 1", st.ErrorRatio)
	}
	if st.Throughput != 0 || st.Goodput != 0 || st.InFlight != 0 || st.LoadHeldRatio != 0 {
		t.Errorf("throughput, goodput, in flight, load held = %v, %v, %v, %v; want 0",
			st.Throughput, st.Goodput, st.InFlight, st.LoadHeldRatio)
	}
	if st.Latency != (result.Latency{}) {
		t.Errorf("latency = %+v, want zero: no response carries a latency", st.Latency)
	}
	if st.Errors["refused"] != 1000 || len(st.Responses) != 0 {
		t.Errorf("errors = %v, responses = %v", st.Errors, st.Responses)
	}
	for _, s := range st.PerSecond {
		if s.Success != 0 || s.Failure != 200 {
			t.Errorf("second %d = %+v, want 0 successes and 200 failures", s.Second, s)
		}
	}
}

func TestStatsQuantilesWithinOnePercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	r := newStepRecorder(0, false)
	const n = 100000
	ref := make([]int64, n)
	for i := range ref {
		// Log-uniform from 5µs to 20s: every octave the histogram covers.
		v := int64(math.Exp(math.Log(5e3) + rng.Float64()*(math.Log(20e9)-math.Log(5e3))))
		ref[i] = v
		r.record(result.Success, result.HTTPStatus(200), time.Duration(v), time.Duration(i)*time.Microsecond)
	}
	slices.Sort(ref)
	st := r.summarize(1, "", time.Second, true)
	for _, c := range []struct {
		q   float64
		got float64
	}{
		{0.5, st.Latency.P50}, {0.9, st.Latency.P90}, {0.95, st.Latency.P95},
		{0.99, st.Latency.P99}, {0.999, st.Latency.P999},
	} {
		// Nearest rank.
		want := float64(ref[int(math.Ceil(c.q*n))-1]) / 1e9
		if !approx(c.got, want, 0.01) {
			t.Errorf("q%v = %v, want %v within 1%%", c.q, c.got, want)
		}
	}
	if want := float64(ref[n-1]) / 1e9; st.Latency.Max != want {
		t.Errorf("max = %v, want exactly %v", st.Latency.Max, want)
	}
	var sum float64
	for _, v := range ref {
		sum += float64(v)
	}
	if want := sum / n / 1e9; !approx(st.Latency.Mean, want, 1e-9) {
		t.Errorf("mean = %v, want exactly %v", st.Latency.Mean, want)
	}
}

func TestStatsLatencyBeyondRange(t *testing.T) {
	r := newStepRecorder(0, false)
	r.record(result.Success, result.HTTPStatus(200), 90*time.Second, 0)
	r.record(result.Success, result.HTTPStatus(200), -time.Second, 0) // a clock step: counted as 0
	st := r.summarize(1, "", time.Second, true)
	if st.Latency.Max != 90 || st.Latency.Mean != 45 {
		t.Errorf("max, mean = %v, %v; want 90, 45 (exact beyond the histogram)", st.Latency.Max, st.Latency.Mean)
	}
	if st.Latency.P999 > st.Latency.Max || st.Latency.P999 < 59 {
		t.Errorf("p99.9 = %v, want the histogram's top, at most the max", st.Latency.P999)
	}
}

// Recorders merged read as one that recorded everything, each second's
// p99 too (kept for a comparison), which is its latencies' to a bucket,
// 6.25% at most.
func TestStatsMergeEqualsOneRecorder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	all := newStepRecorder(0, true)
	parts := []*stepRecorder{newStepRecorder(0, true), newStepRecorder(0, true), newStepRecorder(0, true)}
	for i := 0; i < 30000; i++ {
		o := result.Outcome(rng.IntN(int(result.NumOutcomes)))
		var code result.Code
		if o == result.Success {
			code = result.HTTPStatus(200)
		} else if o == result.HTTPError {
			code = result.HTTPStatus(429)
		}
		lat := time.Duration(rng.Int64N(int64(2 * time.Second)))
		// Parts see different spans, so merging must grow the timeline.
		p := rng.IntN(len(parts))
		at := time.Duration(rng.Int64N(int64(p+2) * int64(time.Second)))
		all.record(o, code, lat, at)
		parts[p].record(o, code, lat, at)
	}
	merged := newStepRecorder(0, false)
	for _, p := range parts {
		merged.merge(p)
	}
	want := all.summarize(32, "x", 4*time.Second, true)
	got := merged.summarize(32, "x", 4*time.Second, true)
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if string(wj) != string(gj) {
		t.Errorf("merged:\n%s\nwant:\n%s", gj, wj)
	}
	// Latencies uniform over [0, 2s): each second's p99 is 1.98s.
	for _, sec := range got.PerSecond {
		if math.Abs(sec.P99/1.98-1) > 0.0625 {
			t.Errorf("second %d: p99 %.3fs, want 1.98s within 6.25%%", sec.Second, sec.P99)
		}
	}
}

func TestStatsResetReuses(t *testing.T) {
	r := newStepRecorder(0, false)
	for i := 0; i < 100; i++ {
		r.record(result.HTTPError, result.HTTPStatus(503), time.Millisecond, time.Duration(i)*50*time.Millisecond)
	}
	r.reset()
	st := r.summarize(1, "", 2*time.Second, true)
	if st.Attempts != 0 || len(st.Responses) != 0 || st.Latency != (result.Latency{}) ||
		!slices.Equal(st.PerSecond, []result.Second{{Second: 0}, {Second: 1}}) {
		t.Errorf("after reset: %+v", st)
	}
	allocs := testing.AllocsPerRun(100, func() {
		r.reset()
		for i := 0; i < 100; i++ {
			o, code := result.Success, result.HTTPStatus(200)
			if i%10 == 0 {
				o, code = result.HTTPError, result.HTTPStatus(503)
			}
			r.record(o, code, time.Millisecond, time.Duration(i)*50*time.Millisecond)
		}
	})
	if allocs != 0 {
		t.Errorf("reset and record allocate %v times, want 0", allocs)
	}
}

func TestStatsEmptyStepJSONHasNoNulls(t *testing.T) {
	st := newStepRecorder(0, false).summarize(1, "", 0, true)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	// error_latency_seconds is null when there was no http_error, as
	// docs/results.md shows; nothing else is.
	if j := strings.Replace(string(b), `"error_latency_seconds":null`, "", 1); strings.Contains(j, "null") {
		t.Errorf("empty step JSON has a null: %s", b)
	}
	if st.Throughput != 0 || st.ErrorRatio != 0 {
		t.Errorf("empty step: %+v", st)
	}
}

func BenchmarkStepRecorderRecord(b *testing.B) {
	r := newStepRecorder(0, false)
	rng := rand.New(rand.NewPCG(5, 6))
	lat := make([]time.Duration, 1024)
	for i := range lat {
		lat[i] = time.Duration(50e3 + rng.Int64N(50e6))
	}
	// Warm the timeline to a whole step and the error histogram, as a
	// reused recorder is.
	r.record(result.Success, result.HTTPStatus(200), 0, 5*time.Second)
	r.record(result.HTTPError, result.HTTPStatus(503), 0, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, code := result.Success, result.HTTPStatus(200)
		if i&15 == 0 {
			o, code = result.HTTPError, result.HTTPStatus(503)
		}
		r.record(o, code, lat[i&1023], time.Duration(i&4095)*time.Millisecond)
	}
}

// The recorder and the analysis together: a target that refuses every
// connection (docs/design.md, "Failures divided by attempts").
func TestAnalysisAllRefusedFromRecorder(t *testing.T) {
	r := &result.Result{Mode: plan.ModeConcurrency}
	rec := newStepRecorder(0, false)
	for _, level := range []float64{1, 2, 4} {
		rec.reset()
		for i := 0; i < 5000; i++ {
			rec.record(result.Refused, result.Code{}, 0, time.Duration(i)*time.Millisecond)
		}
		r.Steps = append(r.Steps, rec.summarize(level, "", 5*time.Second, true))
	}
	analysis.Analyze(r, plan.DefaultRules)
	if r.Steps[0].ErrorRatio != 1 || r.Steps[0].Throughput != 0 {
		t.Errorf("error ratio, throughput = %v, %v; want 1, 0", r.Steps[0].ErrorRatio, r.Steps[0].Throughput)
	}
	bp := r.BreakingPoints
	// Nothing was measured below the first level: the bracket starts at 0.
	if ff := bp.FirstFailure; ff == nil || *ff != (result.Point{Level: 1, Bracket: [2]float64{0, 1}}) {
		t.Errorf("first_failure = %+v; want level 1, throughput 0, bracket [0 1]", ff)
	}
	if bp.Knee != nil || bp.LatencyBudget != nil || r.Capacity != nil {
		t.Errorf("knee, latency_budget, capacity = %+v, %+v, %+v; want none", bp.Knee, bp.LatencyBudget, r.Capacity)
	}
	// Valid: no level below the first failure (1) to judge, and a refused
	// connection is the target's finding, not the generator's failure.
	if !r.Valid || r.PeakThroughput != 0 {
		t.Errorf("valid, peak = %v, %v; want true, 0", r.Valid, r.PeakThroughput)
	}
	if all := strings.Join(r.Diagnosis, "\n"); !strings.Contains(all, "first failure at 1 connection: refused on 100% of attempts (the server never answered: connection refused)") {
		t.Errorf("diagnosis:\n%s", all)
	}
}

// TestLoadHeldCountsHeldTime: load_held_ratio counts every attempt from its
// send to its outcome, inside the window: one waiting for its timeout is
// held load, though Little's law over the responses sees none of it.
func TestLoadHeldCountsHeldTime(t *testing.T) {
	e := &engine{live: live.Nop{}, ctx: context.Background()}
	rec := newStepRecorder(0, false)
	window := 4 * time.Second
	rec.within(window)
	from := time.Now()
	until := from.Add(window)
	// One connection: a timeout begun in the warmup, 3 more timeouts of 1s
	// each, and the last one still waiting at the end of the window.
	sent := from.Add(-500 * time.Millisecond)
	for range 5 {
		done := sent.Add(time.Second)
		e.observe(rec, result.Timeout, result.Code{}, sent, done, from, 0, heldWithin(sent, done, from, until))
		sent = done
	}
	st := rec.summarize(1, "", window, true)
	if !approx(st.LoadHeldRatio, 1, 1e-9) || st.InFlight != 0 {
		t.Errorf("load held %v, in flight %v; want 1 (every moment of the window waited on an attempt) and 0 (no response)", st.LoadHeldRatio, st.InFlight)
	}
	if got := heldWithin(from.Add(time.Second), from.Add(2*time.Second), from, until); got != time.Second {
		t.Errorf("an attempt inside the window held %v, want 1s", got)
	}
}

// Three replicas' steps, their native buckets summed as Prometheus sums a
// fleet's: the bucket where each quantile's rank falls holds the quantile
// of all their samples as the step histograms read it (merged exactly),
// and is narrow enough that Prometheus's estimate inside it (linear
// interpolation, as histogram_quantile does) is within 1% of it, even
// where every latency of a replica is one value, the worst case of the
// interpolation.
func TestStatsNativeBucketsHoldTheFleetsQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for _, c := range []struct {
		name    string
		latency func(replica int) time.Duration
	}{
		// Log-normal around 10, 20 and 40 ms: one replica slower.
		{"spread", func(replica int) time.Duration {
			return time.Duration(float64(10*time.Millisecond) * math.Exp(float64(replica)*math.Ln2+0.5*rng.NormFloat64()))
		}},
		{"one value each", func(replica int) time.Duration { return []time.Duration{10, 13, 17}[replica] * time.Millisecond }},
	} {
		t.Run(c.name, func(t *testing.T) {
			merged := newStepRecorder(0, false)
			sum := map[int]int64{}
			var n int64
			for replica := range 3 {
				r := newStepRecorder(0, false)
				for i := range 30000 {
					r.record(result.Success, result.HTTPStatus(200), c.latency(replica), time.Duration(i)*time.Microsecond)
				}
				b := r.summarize(3, "", time.Second, true).LatencyBuckets
				if b == nil || b.Schema != nativeSchema || b.Zero != 0 {
					t.Fatalf("replica %d: buckets %+v, want schema %d and no zero", replica, b, nativeSchema)
				}
				for i, c := range b.Buckets {
					sum[i] += c
					n += c
				}
				merged.merge(r)
			}
			if n != 90000 {
				t.Fatalf("the buckets count %d latencies, want 90000", n)
			}
			base := math.Exp2(1.0 / (1 << nativeSchema))
			indices := slices.Sorted(maps.Keys(sum))
			for _, q := range []float64{0.1, 0.5, 0.9, 0.99, 0.999} {
				want := float64(merged.success.hist.ValueAtQuantile(100*q)) / 1e9
				rank, below := q*float64(n), int64(0)
				for _, i := range indices {
					if float64(below+sum[i]) < rank {
						below += sum[i]
						continue
					}
					lo, hi := math.Pow(base, float64(i-1)), math.Pow(base, float64(i))
					est := lo + (hi-lo)*(rank-float64(below))/float64(sum[i])
					if want <= lo || want > hi || !approx(est, want, 0.01) {
						t.Errorf("q%v: bucket (%.6f, %.6f] estimates %.6f; the histograms read %.6f, want it inside and within 1%%", q, lo, hi, est, want)
					}
					break
				}
			}
		})
	}
}
