package collector

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// fakeSource hands out whatever the test put in it.
type fakeSource struct {
	mu     sync.Mutex
	states []state.Probe
}

func (f *fakeSource) Snapshot() []state.Probe {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]state.Probe(nil), f.states...)
}

func (f *fakeSource) set(states ...state.Probe) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states = states
}

func probeConfig(name string, minCapacity float64) *plan.Probe {
	return &plan.Probe{
		Name:     name,
		Expect:   plan.Expect{MinCapacity: minCapacity},
		Schedule: plan.Schedule{Interval: model.Duration(time.Hour)},
	}
}

func step(level, goodput float64) result.Step {
	return result.Step{
		Level: level, DurationSeconds: 5, Attempts: 100,
		Throughput: goodput + 10, Goodput: goodput, ErrorRatio: 0.25,
		Latency: result.Latency{
			Mean: 0.007, P50: 0.006, P90: 0.009, P95: 0.01, P99: 0.012, P999: 0.015, Max: 0.02,
		},
		Responses:         result.Codes{result.HTTPStatus(200): 75, result.HTTPStatus(503): 5},
		HTTPErrors:        result.Codes{result.HTTPStatus(503): 5},
		Errors:            map[string]int64{"timeout": 20},
		InFlight:          3.5,
		LoadHeldRatio:     0.875,
		GeneratorCPURatio: 0.25,
	}
}

// completedRun is a two-step ramp whose first_failure rule never fired.
func completedRun() *result.Result {
	return &result.Result{
		Name: "work", Mode: "concurrency", Ended: result.ResultCompleted,
		Started:         time.Unix(1700000000, 0),
		DurationSeconds: 12.5,
		Steps:           []result.Step{step(4, 500), step(0.5, 40)},
		PeakThroughput:  500,
		BreakingPoints: result.BreakingPoints{
			Knee:          &result.Point{Level: 4, Throughput: 500, Bracket: [2]float64{2, 4}},
			LatencyBudget: &result.Point{Level: 0.5, Throughput: 40, Bracket: [2]float64{0, 0.5}},
		},
		Capacity: &result.Point{Level: 4, Throughput: 500},
		Valid:    true,
	}
}

var resultFamilies = []string{
	"loadprobe_step_throughput", "loadprobe_step_goodput", "loadprobe_step_latency_seconds",
	"loadprobe_step_latency_mean_seconds", "loadprobe_step_error_ratio", "loadprobe_step_in_flight",
	"loadprobe_step_load_held_ratio", "loadprobe_step_responses", "loadprobe_step_errors",
	"loadprobe_step_generator_cpu_ratio",
	"loadprobe_breaking_point_level", "loadprobe_breaking_point_throughput", "loadprobe_breaking_point_lower_level",
	"loadprobe_peak_throughput", "loadprobe_capacity_level", "loadprobe_capacity_throughput",
	"loadprobe_run_valid", "loadprobe_run_duration_seconds",
	"loadprobe_run_last_completed_timestamp_seconds", "loadprobe_expected_min_capacity",
	"loadprobe_schedule_interval_seconds", "loadprobe_probe_info",
}

const stepsHeader = `
# HELP loadprobe_step_error_ratio Failed attempts divided by all attempts in the step (not by responses).
# TYPE loadprobe_step_error_ratio gauge
# HELP loadprobe_step_errors Attempts in the step that got no response, by reason.
# TYPE loadprobe_step_errors gauge
# HELP loadprobe_step_goodput Successful responses per second in the step at this load level.
# TYPE loadprobe_step_goodput gauge
# HELP loadprobe_step_in_flight Little's law estimate of requests in flight in the step: throughput × mean latency.
# TYPE loadprobe_step_in_flight gauge
# HELP loadprobe_step_latency_mean_seconds Mean latency of the successful responses in the step, in seconds.
# TYPE loadprobe_step_latency_mean_seconds gauge
# HELP loadprobe_step_latency_seconds Latency of the successful responses in the step, in seconds, as a summary; quantile 1 is the maximum.
# TYPE loadprobe_step_latency_seconds summary
# HELP loadprobe_step_generator_cpu_ratio The process's CPU use over the step's load divided by the CPU it may use (GOMAXPROCS, within the cgroup quota); at or above rules.generator_cpu_budget the step is generator-limited. 0 where not measured.
# TYPE loadprobe_step_generator_cpu_ratio gauge
# HELP loadprobe_step_load_held_ratio How much of the requested load the generator held in the step: attempts in flight, each from its send to its outcome, / connections (closed loop); requests sent / offered rate (open loop). Far below 1 means the level was not really tested.
# TYPE loadprobe_step_load_held_ratio gauge
# HELP loadprobe_step_responses Responses received in the step, by HTTP status code.
# TYPE loadprobe_step_responses gauge
# HELP loadprobe_step_throughput Responses per second (any status code) in the step at this load level, from the run under way or else the last run.
# TYPE loadprobe_step_throughput gauge
`

// stepSeries is the exposition of step(level, goodput) for probe "work".
func stepSeries(level string, goodput, throughput string) string {
	r := strings.NewReplacer("LEVEL", level, "GOODPUT", goodput, "THROUGHPUT", throughput)
	return r.Replace(`
loadprobe_step_error_ratio{level="LEVEL",probe="work"} 0.25
loadprobe_step_errors{level="LEVEL",probe="work",reason="timeout"} 20
loadprobe_step_generator_cpu_ratio{level="LEVEL",probe="work"} 0.25
loadprobe_step_goodput{level="LEVEL",probe="work"} GOODPUT
loadprobe_step_in_flight{level="LEVEL",probe="work"} 3.5
loadprobe_step_latency_mean_seconds{level="LEVEL",probe="work"} 0.007
loadprobe_step_latency_seconds{level="LEVEL",probe="work",quantile="0.5"} 0.006
loadprobe_step_latency_seconds{level="LEVEL",probe="work",quantile="0.9"} 0.009
loadprobe_step_latency_seconds{level="LEVEL",probe="work",quantile="0.95"} 0.01
loadprobe_step_latency_seconds{level="LEVEL",probe="work",quantile="0.99"} 0.012
loadprobe_step_latency_seconds{level="LEVEL",probe="work",quantile="0.999"} 0.015
loadprobe_step_latency_seconds{level="LEVEL",probe="work",quantile="1"} 0.02
loadprobe_step_latency_seconds_sum{level="LEVEL",probe="work"} 0.525
loadprobe_step_latency_seconds_count{level="LEVEL",probe="work"} 75
loadprobe_step_load_held_ratio{level="LEVEL",probe="work"} 0.875
loadprobe_step_responses{code="200",level="LEVEL",probe="work"} 75
loadprobe_step_responses{code="503",level="LEVEL",probe="work"} 5
loadprobe_step_throughput{level="LEVEL",probe="work"} THROUGHPUT
`)
}

const runExposition = `
# HELP loadprobe_breaking_point_lower_level The lower end of the breaking point's bracket in the last run: the highest measured level below it, which kept the rule (0 when none was measured below); the rule fired above it, at breaking_point_level.
# TYPE loadprobe_breaking_point_lower_level gauge
loadprobe_breaking_point_lower_level{probe="work",rule="knee"} 2
loadprobe_breaking_point_lower_level{probe="work",rule="latency_budget"} 0
# HELP loadprobe_breaking_point_level Load level at which a breaking-point rule fired in the last run (knee, latency_budget, first_failure); absent when the rule never fired.
# TYPE loadprobe_breaking_point_level gauge
loadprobe_breaking_point_level{probe="work",rule="knee"} 4
loadprobe_breaking_point_level{probe="work",rule="latency_budget"} 0.5
# HELP loadprobe_breaking_point_throughput Goodput, in successful responses per second, at the level where the rule fired in the last run.
# TYPE loadprobe_breaking_point_throughput gauge
loadprobe_breaking_point_throughput{probe="work",rule="knee"} 500
loadprobe_breaking_point_throughput{probe="work",rule="latency_budget"} 40
# HELP loadprobe_capacity_level Load level of the last run's capacity: the lowest level within the latency and error budgets whose goodput is within 3% of the highest among them; absent when none was within them.
# TYPE loadprobe_capacity_level gauge
loadprobe_capacity_level{probe="work"} 4
# HELP loadprobe_capacity_throughput The last run's capacity: the highest goodput among the levels within the latency and error budgets, in successful responses per second; the figure capacity alerts follow.
# TYPE loadprobe_capacity_throughput gauge
loadprobe_capacity_throughput{probe="work"} 500
# HELP loadprobe_expected_min_capacity The probe's expect.min_capacity, in successful responses per second; absent when not set.
# TYPE loadprobe_expected_min_capacity gauge
loadprobe_expected_min_capacity{probe="work"} 400
# HELP loadprobe_peak_throughput Highest goodput of the last run, in successful responses per second.
# TYPE loadprobe_peak_throughput gauge
loadprobe_peak_throughput{probe="work"} 500
# HELP loadprobe_run_duration_seconds Length of the last run, in seconds.
# TYPE loadprobe_run_duration_seconds gauge
loadprobe_run_duration_seconds{probe="work"} 12.5
# HELP loadprobe_run_last_completed_timestamp_seconds Unix time at which the last completed run ended; absent before the first.
# TYPE loadprobe_run_last_completed_timestamp_seconds gauge
loadprobe_run_last_completed_timestamp_seconds{probe="work"} 1.7000000125e+09
# HELP loadprobe_run_valid 1 when the last run held its load at every level below the first failure, no step was generator-limited (CPU at the budget, or another run overlapping) and the control probe did not flag the generator, else 0.
# TYPE loadprobe_run_valid gauge
loadprobe_run_valid{probe="work"} 1
`

// intervalExposition is what the config alone gives: the interval and what
// the probe is.
const intervalExposition = `
# HELP loadprobe_probe_info What the config says the probe is: mode is concurrency, rate, phases or search; continuous is true for a probe run back to back. Always 1.
# TYPE loadprobe_probe_info gauge
loadprobe_probe_info{continuous="false",mode="concurrency",probe="work"} 1
# HELP loadprobe_schedule_interval_seconds The probe's configured schedule interval, in seconds (for staleness alerts); 0 for a continuous probe.
# TYPE loadprobe_schedule_interval_seconds gauge
loadprobe_schedule_interval_seconds{probe="work"} 3600
`

func newTest(t testing.TB) (*prometheus.Registry, *fakeSource, *Collector) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	src := &fakeSource{}
	c := New(reg)
	RegisterResults(reg, src)
	return reg, src, c
}

func TestCompletedRun(t *testing.T) {
	reg, src, _ := newTest(t)
	src.set(state.Probe{
		Probe:         probeConfig("work", 400),
		Last:          completedRun(),
		LastCompleted: time.Unix(1700000012, 500000000),
	})
	want := stepsHeader + stepSeries("4", "500", "510") + stepSeries("0.5", "40", "50") + runExposition + intervalExposition
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), resultFamilies...); err != nil {
		t.Fatal(err)
	}
}

func TestBeforeFirstRun(t *testing.T) {
	reg, src, _ := newTest(t)
	// No run yet, no min_capacity: only the schedule interval is known.
	src.set(state.Probe{Probe: probeConfig("work", 0)})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(intervalExposition), resultFamilies...); err != nil {
		t.Fatal(err)
	}
}

func TestStepsFollowCurrentRun(t *testing.T) {
	reg, src, _ := newTest(t)
	last := completedRun()
	stepFamilies := resultFamilies[:10]

	// A new run under way with no step finished yet leaves the last run's
	// step series in place (a continuous probe's runs are one step each),
	// and the per-run families still describe the last run.
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: last, Current: &result.Result{Name: "work", Ended: result.ResultRunning}})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stepsHeader+stepSeries("4", "500", "510")+stepSeries("0.5", "40", "50")), stepFamilies...); err != nil {
		t.Fatalf("steps of the last run: %v", err)
	}
	if n, err := testutil.GatherAndCount(reg, "loadprobe_capacity_throughput"); err != nil || n != 1 {
		t.Fatalf("capacity_throughput: %d series, %v; want 1", n, err)
	}

	// Its first step clears them and shows up alone.
	cur := &result.Result{Name: "work", Ended: result.ResultRunning, Steps: []result.Step{step(8, 700)}}
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: last, Current: cur})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stepsHeader+stepSeries("8", "700", "710")), stepFamilies...); err != nil {
		t.Fatal(err)
	}

	// Once it ends, it is the last run.
	cur.Ended = result.ResultCompleted
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: cur})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stepsHeader+stepSeries("8", "700", "710")), stepFamilies...); err != nil {
		t.Fatal(err)
	}
	// Its breaking points and capacity never fired: absent, not 0.
	for _, name := range []string{"loadprobe_breaking_point_level", "loadprobe_breaking_point_throughput", "loadprobe_capacity_level", "loadprobe_capacity_throughput"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
			t.Errorf("%s: %d series, %v; want none", name, n, err)
		}
	}
}

func TestDuplicateLevelsKeepTheLaterStep(t *testing.T) {
	reg, src, _ := newTest(t)
	r := completedRun()
	r.Steps = []result.Step{step(1, 10), step(1, 20)} // two phases at the same rate
	src.set(state.Probe{Probe: probeConfig("work", 0), Last: r})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stepsHeader+stepSeries("1", "20", "30")), resultFamilies[:10]...); err != nil {
		t.Fatal(err)
	}
}

// A step whose every attempt failed has no latency to report: its summary
// has no observation and NaN quantiles, as client_golang's own summaries
// without observations do, and its mean is NaN; a zero would chart it as
// the quickest level of the ramp. Its other figures are there.
func TestStepWithoutSuccessHasNoLatency(t *testing.T) {
	reg, src, _ := newTest(t)
	r := completedRun()
	failed := step(8, 0)
	failed.Responses, failed.HTTPErrors = result.Codes{result.HTTPStatus(503): 60}, result.Codes{result.HTTPStatus(503): 60}
	failed.Errors = map[string]int64{"timeout": 40}
	failed.ErrorRatio, failed.Latency = 1, result.Latency{}
	r.Steps = append(r.Steps, failed)
	src.set(state.Probe{Probe: probeConfig("work", 0), Last: r})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var quantiles, means int
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if labelOf(m.GetLabel(), "level") != "8" {
				continue
			}
			switch mf.GetName() {
			case "loadprobe_step_latency_seconds":
				sum := m.GetSummary()
				if sum.GetSampleCount() != 0 || sum.GetSampleSum() != 0 {
					t.Errorf("level 8: count %d, sum %g; want 0, 0", sum.GetSampleCount(), sum.GetSampleSum())
				}
				for _, q := range sum.GetQuantile() {
					if quantiles++; !math.IsNaN(q.GetValue()) {
						t.Errorf("level 8: quantile %g is %g, want NaN", q.GetQuantile(), q.GetValue())
					}
				}
			case "loadprobe_step_latency_mean_seconds":
				if means++; !math.IsNaN(m.GetGauge().GetValue()) {
					t.Errorf("level 8: mean %g, want NaN", m.GetGauge().GetValue())
				}
			case "loadprobe_step_error_ratio":
				if v := m.GetGauge().GetValue(); v != 1 {
					t.Errorf("level 8: error ratio %g, want 1", v)
				}
			}
		}
	}
	if quantiles != len(result.Quantiles) || means != 1 {
		t.Errorf("level 8: %d quantiles and %d means, want %d and 1", quantiles, means, len(result.Quantiles))
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func labelOf(pairs []*dto.LabelPair, name string) string {
	for _, l := range pairs {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

const liveExposition = `
# HELP loadprobe_concurrency Connections the closed-loop load asks for now (0 when idle).
# TYPE loadprobe_concurrency gauge
loadprobe_concurrency{probe="a"} 16
# HELP loadprobe_dropped_requests_total Open loop: scheduled requests not sent because max_in_flight requests were already outstanding.
# TYPE loadprobe_dropped_requests_total counter
loadprobe_dropped_requests_total{probe="a"} 1
# HELP loadprobe_in_flight_requests Requests sent and not yet answered, now.
# TYPE loadprobe_in_flight_requests gauge
loadprobe_in_flight_requests{probe="a"} 2
# HELP loadprobe_offered_rate Requests per second the open-loop load asks for now (0 when idle).
# TYPE loadprobe_offered_rate gauge
loadprobe_offered_rate{probe="a"} 0
# HELP loadprobe_requests_total Attempts completed, by how they ended (success, http_error, timeout, refused, reset, tls, dns, other, for WebSocket probes closed, script_failed (a response the request's script failed), and the generator's own: generator (out of file descriptors), request_too_large (not sent: rendered above the size bound) and script (the request's script erred or ran out of its bounds)). Outcomes are mutually exclusive: their sum is the number of attempts.
# TYPE loadprobe_requests_total counter
loadprobe_requests_total{outcome="closed",probe="a",step=""} 0
loadprobe_requests_total{outcome="dns",probe="a",step=""} 0
loadprobe_requests_total{outcome="generator",probe="a",step=""} 0
loadprobe_requests_total{outcome="http_error",probe="a",step=""} 1
loadprobe_requests_total{outcome="other",probe="a",step=""} 0
loadprobe_requests_total{outcome="refused",probe="a",step=""} 1
loadprobe_requests_total{outcome="request_too_large",probe="a",step=""} 0
loadprobe_requests_total{outcome="reset",probe="a",step=""} 0
loadprobe_requests_total{outcome="script",probe="a",step=""} 0
loadprobe_requests_total{outcome="script_failed",probe="a",step=""} 0
loadprobe_requests_total{outcome="success",probe="a",step=""} 2
loadprobe_requests_total{outcome="timeout",probe="a",step=""} 0
loadprobe_requests_total{outcome="tls",probe="a",step=""} 0
# HELP loadprobe_responses_total HTTP responses received, by status code. Attempts that got no response are in loadprobe_requests_total only.
# TYPE loadprobe_responses_total counter
loadprobe_responses_total{code="200",probe="a",step=""} 2
loadprobe_responses_total{code="503",probe="a",step=""} 1
# HELP loadprobe_running 1 while a run of the probe is under way, else 0.
# TYPE loadprobe_running gauge
loadprobe_running{probe="a"} 1
# HELP loadprobe_runs_total Runs finished, by result (completed, aborted, failed, canceled).
# TYPE loadprobe_runs_total counter
loadprobe_runs_total{probe="a",result="aborted"} 0
loadprobe_runs_total{probe="a",result="canceled"} 0
loadprobe_runs_total{probe="a",result="completed"} 0
loadprobe_runs_total{probe="a",result="failed"} 0
`

var liveFamilies = []string{
	"loadprobe_concurrency", "loadprobe_dropped_requests_total", "loadprobe_in_flight_requests",
	"loadprobe_offered_rate", "loadprobe_requests_total", "loadprobe_responses_total",
	"loadprobe_running", "loadprobe_runs_total",
}

func TestLive(t *testing.T) {
	reg, _, c := newTest(t)
	c.RunStarted("a")
	l := c.Live("a")
	if c.Live("a") != l {
		t.Error("Live returned a new recorder for the same probe")
	}
	l.Concurrency(16)
	l.InFlight(3)
	l.InFlight(-1)
	l.Attempt(result.Success, result.HTTPStatus(200), 0.003)
	l.Attempt(result.Success, result.HTTPStatus(200), 0.2)
	l.Attempt(result.HTTPError, result.HTTPStatus(503), 0.001)
	l.Attempt(result.Refused, result.Code{}, 0)
	l.Dropped()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(liveExposition), liveFamilies...); err != nil {
		t.Fatal(err)
	}

	// Latency goes to the histogram of the outcome, classic and native alike.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "loadprobe_request_duration_seconds" {
			continue
		}
		for _, m := range mf.Metric {
			h := m.GetHistogram()
			var outcome string
			for _, lp := range m.Label {
				if lp.GetName() == "outcome" {
					outcome = lp.GetValue()
				}
			}
			got[outcome] = h.GetSampleCount()
			if len(h.Bucket) != len(LatencyBuckets) {
				t.Errorf("%s: %d classic buckets, want %d", outcome, len(h.Bucket), len(LatencyBuckets))
			}
			if h.GetSchema() != 3 || (h.GetSampleCount() > 0 && len(h.PositiveSpan) == 0) {
				t.Errorf("%s: native schema %d, spans %v; want schema 3 with buckets", outcome, h.GetSchema(), h.PositiveSpan)
			}
		}
	}
	if got["success"] != 2 || got["http_error"] != 1 || len(got) != 2 {
		t.Errorf("request_duration_seconds counts = %v, want success 2, http_error 1", got)
	}
	// No open-loop figure yet: no send delay series.
	if n, _ := testutil.GatherAndCount(reg, "loadprobe_send_delay_seconds"); n != 0 {
		t.Errorf("send_delay_seconds has %d series before the first delay", n)
	}
	l.SendDelay(0.002)
	if n, _ := testutil.GatherAndCount(reg, "loadprobe_send_delay_seconds"); n != 1 {
		t.Errorf("send_delay_seconds has %d series after one delay, want 1", n)
	}

	c.RunEnded("a", result.ResultCompleted)
	if v := testutil.ToFloat64(c.running.WithLabelValues("a")); v != 0 {
		t.Errorf("running = %v after the run, want 0", v)
	}
	if v := testutil.ToFloat64(c.concurrency.WithLabelValues("a")); v != 0 {
		t.Errorf("concurrency = %v after the run, want 0", v)
	}
	if v := testutil.ToFloat64(c.runs.WithLabelValues("a", "completed")); v != 1 {
		t.Errorf("runs_total{result=completed} = %v, want 1", v)
	}
}

// Codes outside the known set count under "other", and so do known ones
// past the per-probe bound, shared by the probe's flow steps.
func TestUnusualStatusCodes(t *testing.T) {
	_, _, c := newTest(t)
	l := c.Live("a")
	l.Attempt(result.HTTPError, result.HTTPStatus(999), 0.001)
	l.Attempt(result.HTTPError, result.HTTPStatus(1234), 0.001)
	l.Attempt(result.HTTPError, result.HTTPStatus(299), 0.001)
	l.Attempt(result.Success, result.Code{}, 0.001) // no code: no response counted
	if v := testutil.ToFloat64(c.responses.WithLabelValues("a", OtherCode, "")); v != 3 {
		t.Errorf("responses_total{code=other} = %v, want 3", v)
	}
	if n := testutil.CollectAndCount(c.responses); n != 1 {
		t.Errorf("responses_total has %d series, want 1", n)
	}
	var known []int
	for code := 100; code < 600 && len(known) < maxCodesPerProbe+5; code++ {
		if knownStatus(result.HTTPStatus(code)) {
			known = append(known, code)
		}
	}
	for i, code := range known {
		live := l
		if i%2 == 1 {
			live = l.Step("login").(*Live)
		}
		live.Attempt(result.HTTPError, result.HTTPStatus(code), 0.001)
	}
	if v := testutil.ToFloat64(c.responses.WithLabelValues("a", strconv.Itoa(known[0]), "")); v != 1 {
		t.Errorf("responses_total{code=%d} = %v, want 1", known[0], v)
	}
	// 20 codes of their own over both steps, and "other" in each.
	if n := testutil.CollectAndCount(c.responses); n != maxCodesPerProbe+2 {
		t.Errorf("responses_total has %d series, want %d", n, maxCodesPerProbe+2)
	}
}

// Close codes outside the registered ranges count under "other".
func TestUnusualCloseCodes(t *testing.T) {
	_, _, c := newTest(t)
	l := c.Live("a").(*Live)
	for _, code := range []int{1000, 1013, 1016, 2999, 3000, 4999, 5000, 65535} {
		l.CloseCode(code)
	}
	for code, want := range map[string]float64{"1000": 1, "1013": 1, "3000": 1, "4999": 1, OtherCode: 4} {
		if v := testutil.ToFloat64(c.ws.closeCodes.WithLabelValues("a", code)); v != want {
			t.Errorf("close_codes_total{code=%s} = %v, want %v", code, v, want)
		}
	}
	for code := 4000; code < 4100; code++ {
		l.CloseCode(code)
	}
	if n := testutil.CollectAndCount(c.ws.closeCodes); n != maxCodesPerProbe+1 {
		t.Errorf("close_codes_total has %d series, want %d", n, maxCodesPerProbe+1)
	}
}

func TestForget(t *testing.T) {
	reg, src, c := newTest(t)
	for _, p := range []string{"a", "b"} {
		c.RunStarted(p)
		c.Live(p).Attempt(result.Success, result.HTTPStatus(200), 0.01)
		c.Live(p).SendDelay(0.001)
	}
	src.set(state.Probe{Probe: probeConfig("b", 0)})
	c.Forget("a")

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				if lp.GetName() == "probe" && lp.GetValue() != "b" {
					t.Errorf("%s still has a series of probe %q", mf.GetName(), lp.GetValue())
				}
			}
		}
	}
	if n, _ := testutil.GatherAndCount(reg, "loadprobe_requests_total"); n != int(result.NumOutcomes) {
		t.Errorf("requests_total has %d series, want %d for probe b", n, result.NumOutcomes)
	}

	// A probe that comes back starts from 0.
	c.Live("a").Attempt(result.Success, result.HTTPStatus(200), 0.01)
	if v := testutil.ToFloat64(c.requests.WithLabelValues("a", "success", "")); v != 1 {
		t.Errorf("requests_total{probe=a,outcome=success} = %v after coming back, want 1", v)
	}
}

func TestLint(t *testing.T) {
	reg, src, c := newTest(t)
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: completedRun(), LastCompleted: time.Unix(1700000000, 0)})
	c.RunStarted("work")
	l := c.Live("work")
	l.Attempt(result.Success, result.HTTPStatus(200), 0.01)
	l.SendDelay(0.001)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestFailedRun checks that a run that failed before its first step exports
// its per-run figures and no step series.
func TestFailedRun(t *testing.T) {
	reg, src, _ := newTest(t)
	src.set(state.Probe{Probe: probeConfig("work", 0), Last: &result.Result{Name: "work", Ended: result.ResultFailed, Error: "dial tcp: refused"}})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if g := m.GetGauge(); g != nil && math.IsNaN(g.GetValue()) {
				t.Errorf("%s is NaN", mf.GetName())
			}
		}
	}
	if n, _ := testutil.GatherAndCount(reg, "loadprobe_step_throughput"); n != 0 {
		t.Errorf("a run without steps exports %d step series", n)
	}
	if v, _ := testutil.GatherAndCount(reg, "loadprobe_run_valid"); v != 1 {
		t.Errorf("run_valid has %d series, want 1", v)
	}
}

func BenchmarkLiveAttempt(b *testing.B) {
	_, _, c := newTest(b)
	l := c.Live("work")
	l.Attempt(result.Success, result.HTTPStatus(200), 0.001) // the code counter exists from here on
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			l.Attempt(result.Success, result.HTTPStatus(200), 0.0001*float64(i%10000))
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				l.Attempt(result.Success, result.HTTPStatus(200), 0.0001*float64(i%10000))
				i++
			}
		})
	})
	b.Run("classic-only-baseline", func(b *testing.B) {
		// What the same histogram costs without native buckets, for comparison.
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x", Buckets: LatencyBuckets})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			h.Observe(0.0001 * float64(i%10000))
		}
	})
}

func TestContinuousProbeExportsNoInterval(t *testing.T) {
	reg, src, _ := newTest(t)
	p := probeConfig("canary", 0)
	p.Schedule.Continuous = true
	src.set(state.Probe{Probe: p})
	want := `# HELP loadprobe_schedule_interval_seconds The probe's configured schedule interval, in seconds (for staleness alerts); 0 for a continuous probe.
# TYPE loadprobe_schedule_interval_seconds gauge
loadprobe_schedule_interval_seconds{probe="canary"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadprobe_schedule_interval_seconds"); err != nil {
		t.Error(err)
	}
}

// probe_info says what the config makes of each probe: a search is
// mode="search", whichever axis it moves along.
func TestProbeInfo(t *testing.T) {
	reg, src, _ := newTest(t)
	search := probeConfig("searched", 0)
	search.Load = plan.Load{Search: &plan.Search{Rate: &plan.SearchRange{From: 50, Max: 5000}}}
	canary := probeConfig("canary", 0)
	canary.Load, canary.Schedule.Continuous = plan.Load{Rate: []float64{10}}, true
	src.set(state.Probe{Probe: probeConfig("work", 0)}, state.Probe{Probe: search}, state.Probe{Probe: canary})
	want := `# HELP loadprobe_probe_info What the config says the probe is: mode is concurrency, rate, phases or search; continuous is true for a probe run back to back. Always 1.
# TYPE loadprobe_probe_info gauge
loadprobe_probe_info{continuous="false",mode="concurrency",probe="work"} 1
loadprobe_probe_info{continuous="false",mode="search",probe="searched"} 1
loadprobe_probe_info{continuous="true",mode="rate",probe="canary"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadprobe_probe_info"); err != nil {
		t.Error(err)
	}
}

// A gRPC probe's responses are labelled by status name, beside HTTP's codes.
func TestGRPCStatusCodes(t *testing.T) {
	_, _, c := newTest(t)
	l := c.Live("g")
	l.Attempt(result.Success, result.GRPCStatus(0), 0.001)
	l.Attempt(result.HTTPError, result.GRPCStatus(14), 0.001)
	l.Attempt(result.HTTPError, result.GRPCStatus(14), 0.001)
	l.Attempt(result.HTTPError, result.GRPCNotServing, 0.001)
	for code, want := range map[string]float64{"OK": 1, "UNAVAILABLE": 2, "NOT_SERVING": 1} {
		if v := testutil.ToFloat64(c.responses.WithLabelValues("g", code, "")); v != want {
			t.Errorf("responses_total{code=%s} = %v, want %v", code, v, want)
		}
	}
	if n := testutil.CollectAndCount(c.responses); n != 3 {
		t.Errorf("responses_total has %d series, want 3", n)
	}
}

// What a run's telemetry read is exported with it: each step's resources,
// the bottleneck's level and the headroom with the live traffic; and the
// recovery from its overload.
func TestTelemetryFigures(t *testing.T) {
	reg, src, _ := newTest(t)
	r := completedRun()
	r.Steps[0].Saturation = map[string]float64{"workers": 1, "cpu": 0.4}
	r.Bottleneck = &result.Bottleneck{Resource: "workers", Level: 4, Value: 1}
	r.Headroom = &result.Headroom{Ratio: 2.5, Capacity: 500, LivePeak: 200, LiveNow: 120, Window: "7d"}
	recovered := 3.5
	r.Overload = &result.Overload{Grade: result.OverloadGraceful, GoodputRetained: 1, RecoverySeconds: &recovered}
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: r})
	want := `
# HELP loadprobe_recovery_seconds How long the target took to recover once the last run's load past its capacity ended: to the first of three 1s windows in a row at its first level's load without a failure and with a p99 near that level's; absent when it did not within settle_timeout, or the run measured no level past capacity's.
# TYPE loadprobe_recovery_seconds gauge
loadprobe_recovery_seconds{probe="work"} 3.5
# HELP loadprobe_bottleneck_level The level at which the last run's bottleneck, the first declared resource at its limit at or below the knee (else the first failure), reached it; absent when none did.
# TYPE loadprobe_bottleneck_level gauge
loadprobe_bottleneck_level{probe="work",resource="workers"} 4
# HELP loadprobe_headroom_ratio The last run's capacity over the target's live peak traffic over telemetry.peak_window; absent without a traffic query, a capacity or live traffic.
# TYPE loadprobe_headroom_ratio gauge
loadprobe_headroom_ratio{probe="work"} 2.5
# HELP loadprobe_live_peak_throughput The target's highest live traffic over telemetry.peak_window, in requests per second, as the last run ended.
# TYPE loadprobe_live_peak_throughput gauge
loadprobe_live_peak_throughput{probe="work"} 200
# HELP loadprobe_live_throughput The target's live traffic as the last run ended, in requests per second.
# TYPE loadprobe_live_throughput gauge
loadprobe_live_throughput{probe="work"} 120
# HELP loadprobe_step_saturation A resource the probe's telemetry declares, read from the target's Prometheus: its highest over the step's measured window; written when the run ends.
# TYPE loadprobe_step_saturation gauge
loadprobe_step_saturation{level="4",probe="work",resource="cpu"} 0.4
loadprobe_step_saturation{level="4",probe="work",resource="workers"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadprobe_recovery_seconds", "loadprobe_bottleneck_level", "loadprobe_headroom_ratio",
		"loadprobe_live_peak_throughput", "loadprobe_live_throughput", "loadprobe_step_saturation"); err != nil {
		t.Fatal(err)
	}
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: completedRun()})
	if n, err := testutil.GatherAndCount(reg, "loadprobe_bottleneck_level", "loadprobe_headroom_ratio", "loadprobe_step_saturation"); err != nil || n != 0 {
		t.Errorf("a run without telemetry exports %d telemetry series (%v), want none", n, err)
	}
}

// A change point of the capacity history is exported with the probe.
func TestCapacityChange(t *testing.T) {
	reg, src, _ := newTest(t)
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: completedRun(), Change: &result.CapacityChange{RunsAgo: 3, Before: 1000, After: 900}})
	want := `
# HELP loadprobe_capacity_change_ratio The mean capacity of the probe's runs since the latest change point of its capacity history, among its last 30 completed valid runs, over the mean of the runs before it; absent when there is none.
# TYPE loadprobe_capacity_change_ratio gauge
loadprobe_capacity_change_ratio{probe="work"} 0.9
# HELP loadprobe_capacity_change_runs_ago How many completed valid runs ago the latest change point of the probe's capacity history began; absent when there is none.
# TYPE loadprobe_capacity_change_runs_ago gauge
loadprobe_capacity_change_runs_ago{probe="work"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadprobe_capacity_change_ratio", "loadprobe_capacity_change_runs_ago"); err != nil {
		t.Fatal(err)
	}
}

// A comparison's ratio, interval and verdict are exported with its run.
func TestComparison(t *testing.T) {
	reg, src, _ := newTest(t)
	r := completedRun()
	r.Compare = &result.Compare{Verdict: result.VerdictFail, CapacityRatio: 0.9, Interval: [2]float64{0.875, 0.925}}
	src.set(state.Probe{Probe: probeConfig("work", 400), Last: r})
	want := `
# HELP loadprobe_compare_capacity_ratio The last run's candidate's capacity over its baseline's, the probe's request; absent without a comparison.
# TYPE loadprobe_compare_capacity_ratio gauge
loadprobe_compare_capacity_ratio{probe="work"} 0.9
# HELP loadprobe_compare_capacity_ratio_lower The lower end of the capacity ratio's interval at compare.confidence.
# TYPE loadprobe_compare_capacity_ratio_lower gauge
loadprobe_compare_capacity_ratio_lower{probe="work"} 0.875
# HELP loadprobe_compare_capacity_ratio_upper The upper end of the capacity ratio's interval at compare.confidence.
# TYPE loadprobe_compare_capacity_ratio_upper gauge
loadprobe_compare_capacity_ratio_upper{probe="work"} 0.925
# HELP loadprobe_compare_verdict 1 for the last comparison's verdict (pass, fail or inconclusive), 0 for the others; absent without a comparison.
# TYPE loadprobe_compare_verdict gauge
loadprobe_compare_verdict{probe="work",verdict="fail"} 1
loadprobe_compare_verdict{probe="work",verdict="inconclusive"} 0
loadprobe_compare_verdict{probe="work",verdict="pass"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadprobe_compare_capacity_ratio", "loadprobe_compare_capacity_ratio_lower",
		"loadprobe_compare_capacity_ratio_upper", "loadprobe_compare_verdict"); err != nil {
		t.Fatal(err)
	}
}
