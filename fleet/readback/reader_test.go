package readback

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

func testProbe(t *testing.T) *plan.Probe {
	t.Helper()
	cfg, err := config.Parse("f.yml", []byte(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "http://127.0.0.1:8080/work"}
    load: {concurrency: [3, 6, 12, 24], step_duration: 2s}
    rules: {latency_budget: 100ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Plans()[0]
}

// runStart is replica 0's run: every replica's steps start on its offsets.
var runStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// shardSteps is one replica's share of a ramp whose pool saturates at 12
// connections: each of three shards sends a third, and sees a third of
// the fleet's goodput (1000/s per connection up to 12, then flat).
func shardSteps(start time.Time, slow bool) []result.Step {
	var steps []result.Step
	for i, level := range []float64{3, 6, 12, 24} {
		goodput := 1000 * min(level, 12) / 3
		lat := result.Latency{Mean: 0.01, P50: 0.01, P90: 0.012, P95: 0.013, P99: 0.015, P999: 0.02, Max: 0.03}
		if level == 24 {
			lat = result.Latency{Mean: 0.02, P50: 0.02, P90: 0.022, P95: 0.023, P99: 0.025, P999: 0.03, Max: 0.04}
		}
		if slow && level == 24 {
			lat = result.Latency{Mean: 0.05, P50: 0.05, P90: 0.2, P95: 0.3, P99: 0.4, P999: 0.5, Max: 0.6}
		}
		n := int64(goodput * 2)
		steps = append(steps, result.Step{
			Level: level, DurationSeconds: 2, Attempts: n, Throughput: goodput, Goodput: goodput,
			Latency: lat, Responses: result.Codes{result.HTTPStatus(200): n}, Errors: map[string]int64{}, HTTPErrors: result.Codes{},
			InFlight: goodput * lat.Mean, LoadHeldRatio: goodput * lat.Mean / (level / 3),
			Started: start.Add(time.Duration(i) * 3 * time.Second),
		})
	}
	return steps
}

// replica is one shard as Prometheus sees it: its /metrics, labelled with
// its job and instance.
type replica struct {
	shard      fleet.Shard
	steps      []result.Step // nil: it is down
	configHash string        // its loadprobe_shard_info's config_hash
}

type states []state.Probe

func (s states) Snapshot() []state.Probe { return s }

// vector is what Prometheus would hold of the replicas' gauges and
// summaries now, each series with its job and instance; with native, of
// their native histograms too, as a Prometheus with native histograms on
// stores them.
func vector(t *testing.T, p *plan.Probe, rs []replica, native bool) model.Vector {
	t.Helper()
	var v model.Vector
	for i, r := range rs {
		if r.steps == nil {
			continue
		}
		reg := prometheus.NewRegistry()
		src := states{{Probe: p, Last: &result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: r.steps}}}
		collector.New(reg)
		collector.RegisterResults(reg, src)
		collector.RegisterShard(reg, r.shard, func() string { return r.configHash })
		collector.RegisterFleet(reg, src, r.shard)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				base := model.Metric{model.JobLabel: "loadprobe", model.InstanceLabel: model.LabelValue(fmt.Sprintf("replica-%d:10471", i))}
				for _, l := range m.GetLabel() {
					base[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
				}
				add := func(name string, value float64, extra ...string) {
					mm := base.Clone()
					mm[model.MetricNameLabel] = model.LabelValue(name)
					for j := 0; j < len(extra); j += 2 {
						mm[model.LabelName(extra[j])] = model.LabelValue(extra[j+1])
					}
					v = append(v, &model.Sample{Metric: mm, Value: model.SampleValue(value)})
				}
				switch {
				case m.Histogram != nil && native:
					mm := base.Clone()
					mm[model.MetricNameLabel] = model.LabelValue(mf.GetName())
					v = append(v, &model.Sample{Metric: mm, Histogram: sampleHistogram(m.GetHistogram())})
				case m.Gauge != nil:
					add(mf.GetName(), m.GetGauge().GetValue())
				case m.Summary != nil:
					add(mf.GetName()+"_count", float64(m.GetSummary().GetSampleCount()))
					add(mf.GetName()+"_sum", m.GetSummary().GetSampleSum())
					for _, q := range m.GetSummary().GetQuantile() {
						add(mf.GetName(), q.GetValue(), "quantile", fmt.Sprint(q.GetQuantile()))
					}
				}
			}
		}
	}
	return v
}

// fakePrometheus answers the reader's two instant queries from the
// vectors now() returns, after checking the request's basic auth; it
// counts the queries.
func fakePrometheus(t *testing.T, now func() model.Vector, queries *atomic.Int32) string {
	t.Helper()
	info := regexp.MustCompile(`^loadprobe_shard_info\{shards="(\d+)",job="loadprobe"\}$`)
	steps := regexp.MustCompile(`^\{__name__=~"loadprobe_step_\.\+",probe="(\w+)",job="loadprobe"\}$`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, ok := r.BasicAuth(); !ok || u != "fleet" || pw != "secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		queries.Add(1)
		q := r.FormValue("query")
		var out model.Vector
		for _, s := range now() {
			name := string(s.Metric[model.MetricNameLabel])
			if m := info.FindStringSubmatch(q); m != nil && name == "loadprobe_shard_info" && string(s.Metric["shards"]) == m[1] {
				out = append(out, s)
			}
			if m := steps.FindStringSubmatch(q); m != nil && strings.HasPrefix(name, "loadprobe_step_") && string(s.Metric["probe"]) == m[1] {
				out = append(out, s)
			}
		}
		if out == nil && !info.MatchString(q) && !steps.MatchString(q) {
			t.Errorf("unexpected query %q", q)
		}
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": out}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func reader(t *testing.T, url string, wait time.Duration) *Reader {
	t.Helper()
	r, err := New(Options{Prometheus: fleet.Prometheus{
		Prometheus: plan.Prometheus{URL: url, HTTPClientConfig: commoncfg.HTTPClientConfig{BasicAuth: &commoncfg.BasicAuth{Username: "fleet", Password: "secret"}}},
		Selector:   `job="loadprobe"`,
	}, Shards: 3, Wait: wait}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.poll = 10 * time.Millisecond
	return r
}

// sampleHistogram is a native histogram as Prometheus's API answers it:
// each bucket with its bounds and count.
func sampleHistogram(h *dto.Histogram) *model.SampleHistogram {
	sh := &model.SampleHistogram{Count: model.FloatString(h.GetSampleCount()), Sum: model.FloatString(h.GetSampleSum())}
	base := math.Exp2(math.Exp2(-float64(h.GetSchema())))
	buckets := testkit.NativeBuckets(h)
	for _, i := range slices.Sorted(maps.Keys(buckets)) {
		sh.Buckets = append(sh.Buckets, &model.HistogramBucket{
			Lower: model.FloatString(math.Pow(base, float64(i-1))), Upper: model.FloatString(math.Pow(base, float64(i))), Count: model.FloatString(buckets[i])})
	}
	return sh
}

func threeShards(steps func(i int) []result.Step) []replica {
	var rs []replica
	for i := range 3 {
		rs = append(rs, replica{shard: fleet.Shard{Index: i, Count: 3}, steps: steps(i)})
	}
	return rs
}

// The fleet's steps are the shards' sums, judged as one replica's: three
// thirds of a pool of 12 make one knee at 12 and a peak of 12000/s.
func TestJudgeSumsEveryShard(t *testing.T) {
	p := testProbe(t)
	rs := threeShards(func(int) []result.Step { return shardSteps(runStart, false) })
	var queries atomic.Int32
	url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, url, time.Second).Judge(context.Background(), p, own)
	if !f.Valid || f.Replicas != 3 || len(f.Problems) != 0 || len(f.MissingShards) != 0 {
		t.Fatalf("fleet valid %v with %d replicas, problems %q, want valid with 3", f.Valid, f.Replicas, f.Problems)
	}
	if f.PeakThroughput != 12000 || f.BreakingPoints.Knee == nil || f.BreakingPoints.Knee.Level != 12 {
		t.Errorf("peak %g, knee %+v; want 12000/s and the knee at 12", f.PeakThroughput, f.BreakingPoints.Knee)
	}
	// 12 and 24 both reach 12000/s within the budget: capacity is the
	// first level of the highest goodput.
	if f.Capacity == nil || f.Capacity.Level != 12 || f.BreakingPoints.LatencyBudget != nil {
		t.Errorf("capacity %+v, latency budget %+v; want 12, the highest goodput within the budget", f.Capacity, f.BreakingPoints.LatencyBudget)
	}
	s := f.Steps[2]
	if s.Attempts != 3*8000 || s.Responses[result.HTTPStatus(200)] != 24000 || s.Goodput != 12000 || s.Latency.P99 != 0.015 || s.Latency.Mean != 0.01 {
		t.Errorf("level 12: %d attempts, goodput %g, p99 %g, mean %g; want 24000, 12000, the shards' 15ms and 10ms", s.Attempts, s.Goodput, s.Latency.P99, s.Latency.Mean)
	}
	if !s.Started.Equal(runStart.Add(6*time.Second)) || f.StepStartSkewSeconds != 0 {
		t.Errorf("level 12 started %s, skew %g; want %s, 0", s.Started, f.StepStartSkewSeconds, runStart.Add(6*time.Second))
	}
	if n := queries.Load(); n != 2 {
		t.Errorf("%d queries, want 2: the first read was whole", n)
	}
}

// One saturated replica's slow tail is the fleet's: its p99 of 400ms over
// a third of the responses puts the fleet's p99 above the 100ms budget,
// where the mean of the shards' p99s (150ms) would hide where it comes from
// and the fast shards' (25ms) would pass it.
func TestJudgeKeepsASlowShardsTail(t *testing.T) {
	p := testProbe(t)
	rs := threeShards(func(i int) []result.Step { return shardSteps(runStart, i == 1) })
	var queries atomic.Int32
	url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, url, time.Second).Judge(context.Background(), p, own)
	lat := f.Steps[3].Latency
	if lat.P99 <= 0.1 || lat.P99 > 0.4 || lat.Max != 0.6 {
		t.Errorf("level 24 p99 %g, max %g; want above the 100ms budget, at most the slow shard's 400ms; max 600ms", lat.P99, lat.Max)
	}
	if lb := f.BreakingPoints.LatencyBudget; lb == nil || lb.Level != 24 || f.Capacity == nil || f.Capacity.Level != 12 {
		t.Errorf("latency budget %+v, capacity %+v; want 24 and 12", lb, f.Capacity)
	}
}

// With native histograms in Prometheus the fleet's quantiles are theirs,
// summed: a slow shard whose tenth of the responses at level 24 took
// 400 ms is a thirtieth of the fleet's, so the fleet's p99 is that
// bucket's (within 1% of 400 ms) and its p90 the fast one's (10 ms),
// where the summaries' mixture can only say it lies between the shards'
// own quantiles. The result says which it read.
func TestJudgeReadsNativeHistograms(t *testing.T) {
	p := testProbe(t)
	bucket := func(seconds float64) int { return int(math.Ceil(math.Log2(seconds) * 128)) }
	rs := threeShards(func(i int) []result.Step {
		steps := shardSteps(runStart, i == 1)
		for j := range steps {
			n := steps[j].Succeeded()
			b := map[int]int64{bucket(0.01): n}
			if i == 1 && steps[j].Level == 24 {
				b = map[int]int64{bucket(0.01): n - n/10, bucket(0.4): n / 10}
			}
			steps[j].LatencyBuckets = &result.NativeBuckets{Schema: 7, Buckets: b}
		}
		return steps
	})
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	for _, native := range []bool{true, false} {
		var queries atomic.Int32
		url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, native) }, &queries)
		f := reader(t, url, time.Second).Judge(context.Background(), p, own)
		lat := f.Steps[3].Latency
		if !native {
			if f.LatencySource != result.LatencySummaries || lat.P99 == 0.4 {
				t.Errorf("without native histograms: source %q, p99 %g; want summaries, their mixture", f.LatencySource, lat.P99)
			}
			continue
		}
		if f.LatencySource != result.LatencyNative || f.LatencySource.Bound() != "p99 ±1% (native histograms)" {
			t.Errorf("latency source %q (%q), want native_histograms", f.LatencySource, f.LatencySource.Bound())
		}
		if math.Abs(lat.P99-0.4) > 0.004 || math.Abs(lat.P90-0.01) > 0.0001 || lat.Max != 0.6 {
			t.Errorf("level 24: p90 %g, p99 %g, max %g; want 10ms and 400ms within 1%%, the summaries' max 600ms", lat.P90, lat.P99, lat.Max)
		}
		if lb := f.BreakingPoints.LatencyBudget; lb == nil || lb.Level != 24 {
			t.Errorf("latency budget %+v, want 24: the native p99 is above 100ms", lb)
		}
	}
}

// A shard whose level got no successful response exports no latency there
// (NaN quantiles, no count): the fleet's latency at that level is the other
// shards', neither NaN nor pulled towards zero.
func TestJudgeLeavesOutAShardWithoutSuccesses(t *testing.T) {
	p := testProbe(t)
	rs := threeShards(func(i int) []result.Step {
		steps := shardSteps(runStart, false)
		if i == 1 {
			s := &steps[3]
			s.Responses, s.HTTPErrors = result.Codes{result.HTTPStatus(503): s.Attempts}, result.Codes{result.HTTPStatus(503): s.Attempts}
			s.Goodput, s.ErrorRatio, s.Latency = 0, 1, result.Latency{}
		}
		return steps
	})
	var queries atomic.Int32
	url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, url, time.Second).Judge(context.Background(), p, own)
	if lat := f.Steps[3].Latency; lat.P50 != 0.02 || lat.P99 != 0.025 || lat.Max != 0.04 || lat.Mean != 0.02 {
		t.Errorf("level 24 latency %+v; want the two answering shards' p50 20ms, p99 25ms, max 40ms, mean 20ms", lat)
	}
}

// A shard that is missing, dead or late makes the fleet's run invalid,
// names the shard and the levels it lacks, and leaves out every figure its
// missing share would lower. The reader asks again until Wait has passed.
func TestJudgeNamesAMissingShard(t *testing.T) {
	p := testProbe(t)
	for _, tc := range []struct {
		name    string
		steps   func(i int) []result.Step
		missing []int
		problem string
	}{
		{"down", func(i int) []result.Step {
			if i == 2 {
				return nil
			}
			return shardSteps(runStart, false)
		}, []int{2}, "shard 2 of 3 has no step in this run at connections 3, 6, 12, 24"},
		{"dead mid-run", func(i int) []result.Step {
			if i == 1 {
				return shardSteps(runStart, false)[:2]
			}
			return shardSteps(runStart, false)
		}, []int{1}, "shard 1 of 3 has no step in this run at connections 12, 24"},
		{"an earlier run", func(i int) []result.Step {
			if i == 0 {
				return shardSteps(runStart.Add(-time.Hour), false)
			}
			return shardSteps(runStart, false)
		}, []int{0}, "shard 0 of 3 has no step in this run at connections 3, 6, 12, 24"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := threeShards(tc.steps)
			var queries atomic.Int32
			url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
			own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
			f := reader(t, url, time.Second).Judge(context.Background(), p, own)
			if f.Valid || !slices.Equal(f.MissingShards, tc.missing) || f.Replicas != 2 {
				t.Errorf("valid %v, missing %v, %d replicas; want invalid, %v, 2", f.Valid, f.MissingShards, f.Replicas, tc.missing)
			}
			if len(f.Problems) != 1 || !strings.HasPrefix(f.Problems[0], tc.problem) {
				t.Errorf("problems %q, want %q", f.Problems, tc.problem)
			}
			if f.Capacity != nil || f.PeakThroughput != 0 || f.BreakingPoints != (result.BreakingPoints{}) {
				t.Errorf("capacity %+v, peak %g, breaking points %+v with a shard missing; want none", f.Capacity, f.PeakThroughput, f.BreakingPoints)
			}
			if n := queries.Load(); n < 4 {
				t.Errorf("%d queries (two a read), want it to read again while a shard is missing", n)
			}
		})
	}
}

// A shard whose last step is scraped after replica 0's run ended is
// waited for.
func TestJudgeWaitsForTheLastScrape(t *testing.T) {
	p := testProbe(t)
	var queries atomic.Int32
	url := lastStepScrapedLate(t, p, &queries)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, url, 10*time.Second).Judge(context.Background(), p, own)
	if !f.Valid || f.Replicas != 3 {
		t.Errorf("valid %v with %d replicas, problems %q; want valid once the last step is scraped", f.Valid, f.Replicas, f.Problems)
	}
}

// lastStepScrapedLate is a fake Prometheus of three shards whose last
// step comes with the reader's second read (its third and fourth query).
func lastStepScrapedLate(t *testing.T, p *plan.Probe, queries *atomic.Int32) string {
	t.Helper()
	partial := threeShards(func(int) []result.Step { return shardSteps(runStart, false)[:3] })
	whole := threeShards(func(int) []result.Step { return shardSteps(runStart, false) })
	return fakePrometheus(t, func() model.Vector {
		if queries.Load() < 4 {
			return vector(t, p, partial, false)
		}
		return vector(t, p, whole, false)
	}, queries)
}

// Two replicas that say they are one shard sent its share twice.
func TestJudgeNamesADuplicateShard(t *testing.T) {
	p := testProbe(t)
	rs := threeShards(func(int) []result.Step { return shardSteps(runStart, false) })
	rs = append(rs, replica{shard: fleet.Shard{Index: 1, Count: 3}, steps: shardSteps(runStart, false)})
	var queries atomic.Int32
	url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, url, 50*time.Millisecond).Judge(context.Background(), p, own)
	if f.Valid || len(f.Problems) == 0 || !strings.Contains(f.Problems[0], "shard 1 of 3 runs twice") {
		t.Errorf("valid %v, problems %q; want invalid: shard 1 runs twice", f.Valid, f.Problems)
	}
	if f.Capacity != nil || f.PeakThroughput != 0 {
		t.Errorf("capacity %+v, peak %g with a share sent twice; want none", f.Capacity, f.PeakThroughput)
	}
}

// One shard whose generator was busy at a level (its
// loadprobe_step_generator_cpu_ratio at the 0.9 budget) makes the fleet's
// level generator-limited, and the fleet's run not valid.
func TestJudgeSeesABusyShardGenerator(t *testing.T) {
	p := testProbe(t)
	rs := threeShards(func(i int) []result.Step {
		steps := shardSteps(runStart, false)
		if i == 1 {
			steps[3].GeneratorCPURatio = 0.95
		}
		return steps
	})
	var queries atomic.Int32
	url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, url, 50*time.Millisecond).Judge(context.Background(), p, own)
	if f.Valid || f.Steps[3].GeneratorCPURatio != 0.95 || f.Steps[2].GeneratorCPURatio != 0 {
		t.Errorf("fleet valid %v, generator CPU at 12 and 24: %v, %v; want not valid, 0 and 0.95", f.Valid, f.Steps[2].GeneratorCPURatio, f.Steps[3].GeneratorCPURatio)
	}
}

// The shards' step responses are read back by their code labels: a gRPC
// probe's status names, of which OK alone is a success, and the "other"
// that a target's rare codes are bounded to, an http_error. None is lost:
// the fleet's attempts are the shards'.
func TestJudgeReadsEveryCodeLabel(t *testing.T) {
	grpcProbe, err := config.Parse("f.yml", []byte(`allowed_targets: ["127.0.0.1"]
probes:
  - name: work
    request: {url: "grpc://127.0.0.1:50051", grpc: {method: loadprobe.demo.v1.Target/Work}}
    load: {concurrency: [3, 6, 12, 24], step_duration: 2s}
    rules: {latency_budget: 100ms, error_ratio_budget: 0.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		p             *plan.Probe
		ok, failed    result.Code
		wantOK, wantE result.Code // the fleet's code of the successes and of the failures
	}{
		{"HTTP, a code outside the registry", testProbe(t), result.HTTPStatus(200), result.HTTPStatus(599), result.HTTPStatus(200), result.CodeOther},
		{"gRPC", grpcProbe.Plans()[0], result.GRPCStatus(0), result.GRPCStatus(14), result.GRPCStatus(0), result.GRPCStatus(14)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := func(int) []result.Step {
				steps := shardSteps(runStart, false)
				for i := range steps {
					n := steps[i].Attempts
					steps[i].Responses = result.Codes{tc.ok: n - 10, tc.failed: 10}
					steps[i].HTTPErrors = result.Codes{tc.failed: 10}
				}
				return steps
			}
			rs := threeShards(steps)
			url := fakePrometheus(t, func() model.Vector { return vector(t, tc.p, rs, false) }, new(atomic.Int32))
			own := result.Result{Name: tc.p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: steps(0)}
			f := reader(t, url, time.Second).Judge(context.Background(), tc.p, own)
			if len(f.Steps) != 4 {
				t.Fatalf("%d fleet steps, problems %q; want 4", len(f.Steps), f.Problems)
			}
			s, n := f.Steps[2], own.Steps[2].Attempts
			if s.Attempts != 3*n || s.Responses[tc.wantOK] != 3*(n-10) || s.Responses[tc.wantE] != 30 || s.HTTPErrors[tc.wantE] != 30 || len(s.HTTPErrors) != 1 {
				t.Errorf("level 12: %d attempts, responses %v, http_errors %v; want %d attempts, %d %s and 30 %s, those 30 the only http_errors",
					s.Attempts, s.Responses, s.HTTPErrors, 3*n, 3*(n-10), tc.wantOK.String(), tc.wantE.String())
			}
		})
	}
}
