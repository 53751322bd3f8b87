package collector

import (
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// Names of the step families that the fleet reader reads back from
// Prometheus, each shard's, to sum them (package fleet/readback). The latency
// summary's series add _count and _sum to its name.
const (
	StepThroughputName = namespace + "_step_throughput"
	StepGoodputName    = namespace + "_step_goodput"
	StepLatencyName    = namespace + "_step_latency_seconds"
	// StepLatencyHistogramName is the native histogram of the same latencies.
	StepLatencyHistogramName = namespace + "_step_latency_histogram_seconds"
	StepInFlightName         = namespace + "_step_in_flight"
	StepLoadHeldName         = namespace + "_step_load_held_ratio"
	StepGeneratorCPUName     = namespace + "_step_generator_cpu_ratio"
	StepResponsesName        = namespace + "_step_responses"
	StepErrorsName           = namespace + "_step_errors"
	StepStartedName          = namespace + "_step_started_timestamp_seconds"
	StepShareName            = namespace + "_step_share"
)

var (
	probeL      = []string{"probe"}
	probeLevelL = []string{"probe", "level"}

	stepThroughput = desc(StepThroughputName,
		"Responses per second (any status code) in the step at this load level, from the run under way or else the last run.", probeLevelL...)
	stepGoodput = desc(StepGoodputName,
		"Successful responses per second in the step at this load level.", probeLevelL...)
	stepLatency = desc(StepLatencyName,
		"Latency of the successful responses in the step, in seconds, as a summary; quantile 1 is the maximum.", probeLevelL...)
	stepLatencyHistogram = desc(StepLatencyHistogramName,
		"Latency of the successful responses in the step, in seconds, as a native histogram (schema 7: buckets 0.54% wide), so that histogram_quantile over a sum by (probe, level) across replicas lies within 1% of the exact quantile of all their samples. Only _count and _sum without native histograms.", probeLevelL...)
	stepLatencyMean = desc(namespace+"_step_latency_mean_seconds",
		"Mean latency of the successful responses in the step, in seconds.", probeLevelL...)
	stepErrorRatio = desc(namespace+"_step_error_ratio",
		"Failed attempts divided by all attempts in the step (not by responses).", probeLevelL...)
	stepInFlight = desc(StepInFlightName,
		"Little's law estimate of requests in flight in the step: throughput × mean latency.", probeLevelL...)
	stepLoadHeld = desc(StepLoadHeldName,
		"How much of the requested load the generator held in the step: attempts in flight, each from its send to its outcome, / connections (closed loop); requests sent / offered rate (open loop). Far below 1 means the level was not really tested.", probeLevelL...)
	stepGeneratorCPU = desc(StepGeneratorCPUName,
		"The process's CPU use over the step's load divided by the CPU it may use (GOMAXPROCS, within the cgroup quota); at or above rules.generator_cpu_budget the step is generator-limited. 0 where not measured.", probeLevelL...)
	stepResponses = desc(StepResponsesName,
		"Responses received in the step, by HTTP status code.", "probe", "level", "code")
	stepErrors = desc(StepErrorsName,
		"Attempts in the step that got no response, by reason.", "probe", "level", "reason")
	stepSaturation = desc(namespace+"_step_saturation",
		"A resource the probe's telemetry declares, read from the target's Prometheus: its highest over the step's measured window; written when the run ends.", "probe", "level", "resource")

	breakingLevel = desc(namespace+"_breaking_point_level",
		"Load level at which a breaking-point rule fired in the last run (knee, latency_budget, first_failure); absent when the rule never fired.", "probe", "rule")
	breakingThroughput = desc(namespace+"_breaking_point_throughput",
		"Goodput, in successful responses per second, at the level where the rule fired in the last run.", "probe", "rule")
	breakingLower = desc(namespace+"_breaking_point_lower_level",
		"The lower end of the breaking point's bracket in the last run: the highest measured level below it, which kept the rule (0 when none was measured below); the rule fired above it, at breaking_point_level.", "probe", "rule")
	peakThroughput = desc(namespace+"_peak_throughput",
		"Highest goodput of the last run, in successful responses per second.", probeL...)
	capacityLevel = desc(namespace+"_capacity_level",
		"Load level of the last run's capacity: the lowest level within the latency and error budgets whose goodput is within 3% of the highest among them; absent when none was within them.", probeL...)
	capacityThroughput = desc(namespace+"_capacity_throughput",
		"The last run's capacity: the highest goodput among the levels within the latency and error budgets, in successful responses per second; the figure capacity alerts follow.", probeL...)
	overloadRetained = desc(namespace+"_overload_goodput_retained",
		"The lowest goodput of the last run's levels past its capacity's, over the capacity: 0.9 and above is a graceful overload, below 0.5 a collapse; absent when the run measured no level past capacity's.", probeL...)
	recoverySeconds = desc(namespace+"_recovery_seconds",
		"How long the target took to recover once the last run's load past its capacity ended: to the first of three 1s windows in a row at its first level's load without a failure and with a p99 near that level's; absent when it did not within settle_timeout, or the run measured no level past capacity's.", probeL...)
	bottleneckLevel = desc(namespace+"_bottleneck_level",
		"The level at which the last run's bottleneck, the first declared resource at its limit at or below the knee (else the first failure), reached it; absent when none did.", "probe", "resource")
	headroomRatio = desc(namespace+"_headroom_ratio",
		"The last run's capacity over the target's live peak traffic over telemetry.peak_window; absent without a traffic query, a capacity or live traffic.", probeL...)
	livePeak = desc(namespace+"_live_peak_throughput",
		"The target's highest live traffic over telemetry.peak_window, in requests per second, as the last run ended.", probeL...)
	liveNow = desc(namespace+"_live_throughput",
		"The target's live traffic as the last run ended, in requests per second.", probeL...)
	changeRatio = desc(namespace+"_capacity_change_ratio",
		"The mean capacity of the probe's runs since the latest change point of its capacity history, among its last 30 completed valid runs, over the mean of the runs before it; absent when there is none.", probeL...)
	changeRunsAgo = desc(namespace+"_capacity_change_runs_ago",
		"How many completed valid runs ago the latest change point of the probe's capacity history began; absent when there is none.", probeL...)
	compareRatio = desc(namespace+"_compare_capacity_ratio",
		"The last run's candidate's capacity over its baseline's, the probe's request; absent without a comparison.", probeL...)
	compareLower = desc(namespace+"_compare_capacity_ratio_lower",
		"The lower end of the capacity ratio's interval at compare.confidence.", probeL...)
	compareUpper = desc(namespace+"_compare_capacity_ratio_upper",
		"The upper end of the capacity ratio's interval at compare.confidence.", probeL...)
	compareVerdict = desc(namespace+"_compare_verdict",
		"1 for the last comparison's verdict (pass, fail or inconclusive), 0 for the others; absent without a comparison.", "probe", "verdict")
	runValid = desc(namespace+"_run_valid",
		"1 when the last run held its load at every level below the first failure, no step was generator-limited (CPU at the budget, or another run overlapping) and the control probe did not flag the generator, else 0.", probeL...)
	runDuration = desc(namespace+"_run_duration_seconds",
		"Length of the last run, in seconds.", probeL...)
	lastCompleted = desc(namespace+"_run_last_completed_timestamp_seconds",
		"Unix time at which the last completed run ended; absent before the first.", probeL...)
	expectedMin = desc(namespace+"_expected_min_capacity",
		"The probe's expect.min_capacity, in successful responses per second; absent when not set.", probeL...)
	scheduleInterval = desc(namespace+"_schedule_interval_seconds",
		"The probe's configured schedule interval, in seconds (for staleness alerts); 0 for a continuous probe.", probeL...)
	probeInfo = desc(namespace+"_probe_info",
		"What the config says the probe is: mode is concurrency, rate, phases or search; continuous is true for a probe run back to back. Always 1.", "probe", "mode", "continuous")

	modelContention = desc(namespace+"_model_contention",
		"Contention coefficient σ of the Universal Scalability Law fitted to the last run (a lock, a pool, a single thread); absent without a fit.", probeL...)
	modelCoherency = desc(namespace+"_model_coherency",
		"Coherency coefficient κ of the Universal Scalability Law fitted to the last run (cross-talk that makes throughput fall past the peak); absent when the fit could not tell it from 0.", probeL...)
	modelSingle = desc(namespace+"_model_single_throughput",
		"Throughput of one (λ) in the Universal Scalability Law fitted to the last run, in successful responses per second; absent without a fit.", probeL...)
	modelPeakLevel = desc(namespace+"_model_peak_level",
		"Load level N* at which the fitted Universal Scalability Law peaks, √((1−σ)/κ); absent without a measured κ.", probeL...)
	modelPeakThroughput = desc(namespace+"_model_peak_throughput",
		"Goodput the fitted Universal Scalability Law predicts at its peak N*, in successful responses per second; absent without a measured κ.", probeL...)
	modelFitError = desc(namespace+"_model_fit_error_ratio",
		"Root mean square error of the Universal Scalability Law fit of the last run over its mean goodput; absent without a fit.", probeL...)

	allResultDescs = []*prometheus.Desc{
		stepThroughput, stepGoodput, stepLatency, stepLatencyHistogram, stepLatencyMean, stepErrorRatio,
		stepInFlight, stepLoadHeld, stepGeneratorCPU, stepResponses, stepErrors, stepSaturation,
		breakingLevel, breakingThroughput, breakingLower, peakThroughput, capacityLevel,
		capacityThroughput, overloadRetained, recoverySeconds, bottleneckLevel, headroomRatio,
		livePeak, liveNow, changeRatio, changeRunsAgo, compareRatio, compareLower, compareUpper,
		compareVerdict, runValid, runDuration, lastCompleted, expectedMin,
		scheduleInterval, probeInfo, modelContention, modelCoherency, modelSingle,
		modelPeakLevel, modelPeakThroughput, modelFitError,
	}
)

// resultCollector builds the per-step and per-run families at scrape time.
type resultCollector struct{ src Source }

// RegisterResults registers on reg the per-step and per-run families,
// read from src at scrape time.
func RegisterResults(reg prometheus.Registerer, src Source) {
	reg.MustRegister(&resultCollector{src: src})
}

func (rc *resultCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allResultDescs {
		ch <- d
	}
}

func (rc *resultCollector) Collect(ch chan<- prometheus.Metric) {
	if rc.src == nil {
		return
	}
	for _, ps := range rc.src.Snapshot() {
		collectProbe(ch, ps)
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func collectProbe(ch chan<- prometheus.Metric, ps state.Probe) {
	name := ps.Probe.Name

	// A continuous probe has no interval: it runs back to back.
	interval := time.Duration(ps.Probe.Schedule.Interval).Seconds()
	if ps.Probe.Schedule.Continuous {
		interval = 0
	}
	gauge(ch, scheduleInterval, interval, name)
	gauge(ch, probeInfo, 1, name, string(ps.Probe.Load.Key()), strconv.FormatBool(ps.Probe.Schedule.Continuous))
	if ps.Probe.Expect.MinCapacity != 0 {
		gauge(ch, expectedMin, ps.Probe.Expect.MinCapacity, name)
	}
	if !ps.LastCompleted.IsZero() {
		gauge(ch, lastCompleted, float64(ps.LastCompleted.UnixNano())/1e9, name)
	}
	if c := ps.Change; c != nil {
		gauge(ch, changeRatio, c.Ratio(), name)
		gauge(ch, changeRunsAgo, float64(c.RunsAgo), name)
	}

	// The run under way replaces the last run's step series from its first
	// finished step on; before that they would be empty, and a continuous
	// probe, whose runs are one step each, would have none most of the time.
	steps := ps.Current
	if steps == nil || len(steps.Steps) == 0 {
		steps = ps.Last
	}
	if steps != nil {
		collectSteps(ch, name, steps.Steps)
	}

	r := ps.Last
	if r == nil {
		return
	}
	for _, rule := range result.Rules {
		p := r.BreakingPoints.Of(rule)
		if p == nil {
			continue
		}
		gauge(ch, breakingLevel, p.Level, name, string(rule))
		gauge(ch, breakingThroughput, p.Throughput, name, string(rule))
		if p.Bracket[1] > 0 { // phases have no bracket
			gauge(ch, breakingLower, p.Bracket[0], name, string(rule))
		}
	}
	gauge(ch, peakThroughput, r.PeakThroughput, name)
	if r.Capacity != nil {
		gauge(ch, capacityLevel, r.Capacity.Level, name)
		gauge(ch, capacityThroughput, r.Capacity.Throughput, name)
	}
	collectBeyondCapacity(ch, name, r)
	gauge(ch, runValid, boolValue(r.Valid), name)
	gauge(ch, runDuration, r.DurationSeconds, name)
	collectModel(ch, name, r.Model)
}

// collectBeyondCapacity exports what the run says beyond its capacity:
// how the target served past it and recovered, what ran out, the headroom
// over its live traffic, and the verdict on a compared candidate.
func collectBeyondCapacity(ch chan<- prometheus.Metric, name string, r *result.Result) {
	if o := r.Overload; o != nil {
		gauge(ch, overloadRetained, o.GoodputRetained, name)
		if o.RecoverySeconds != nil {
			gauge(ch, recoverySeconds, *o.RecoverySeconds, name)
		}
	}
	if b := r.Bottleneck; b != nil {
		gauge(ch, bottleneckLevel, b.Level, name, b.Resource)
	}
	if h := r.Headroom; h != nil {
		gauge(ch, headroomRatio, h.Ratio, name)
		gauge(ch, livePeak, h.LivePeak, name)
		gauge(ch, liveNow, h.LiveNow, name)
	}
	if c := r.Compare; c != nil {
		gauge(ch, compareRatio, c.CapacityRatio, name)
		gauge(ch, compareLower, c.Interval[0], name)
		gauge(ch, compareUpper, c.Interval[1], name)
		for _, v := range []string{result.VerdictPass, result.VerdictFail, result.VerdictInconclusive} {
			gauge(ch, compareVerdict, boolValue(c.Verdict == v), name, v)
		}
	}
}

// collectModel exports the run's fit: nothing for a verdict without
// coefficients, σ, λ and the error without κ and the peak when κ could not
// be told from 0 (docs/model.md, "Verdicts").
func collectModel(ch chan<- prometheus.Metric, name string, m *result.Model) {
	if !m.HasFit() {
		return
	}
	gauge(ch, modelContention, m.Sigma, name)
	gauge(ch, modelSingle, m.Lambda, name)
	gauge(ch, modelFitError, m.FitErrorRatio, name)
	if m.HasPeak() {
		gauge(ch, modelCoherency, m.Kappa, name)
		gauge(ch, modelPeakLevel, m.PeakLevel, name)
		gauge(ch, modelPeakThroughput, m.PeakThroughput, name)
	}
}

// collectSteps exports one series set per level. Should two steps share a
// level (two phases at the same rate), the later one wins: a scrape must never
// carry the same series twice.
func collectSteps(ch chan<- prometheus.Metric, name string, steps []result.Step) {
	codes := stepCodeLabels(steps)
	seen := make(map[string]struct{}, len(steps))
	for i := len(steps) - 1; i >= 0; i-- {
		s := &steps[i]
		if s.Cut {
			continue // a part of its level: no figure of it
		}
		level := plan.FormatLevel(s.Level)
		if _, dup := seen[level]; dup {
			continue
		}
		seen[level] = struct{}{}

		gauge(ch, stepThroughput, s.Throughput, name, level)
		gauge(ch, stepGoodput, s.Goodput, name, level)
		stepLatencySeries(ch, s, name, level)
		gauge(ch, stepErrorRatio, s.ErrorRatio, name, level)
		gauge(ch, stepInFlight, s.InFlight, name, level)
		gauge(ch, stepLoadHeld, s.LoadHeldRatio, name, level)
		gauge(ch, stepGeneratorCPU, s.GeneratorCPURatio, name, level)
		byLabel := map[string]int64{}
		for code, n := range s.Responses {
			byLabel[codes[code]] += n
		}
		for code, n := range byLabel {
			gauge(ch, stepResponses, float64(n), name, level, code)
		}
		for reason, n := range s.Errors {
			gauge(ch, stepErrors, float64(n), name, level, reason)
		}
		for resource, v := range s.Saturation {
			gauge(ch, stepSaturation, v, name, level, resource)
		}
	}
}

// stepLatencySeries exports the latency of a step's successful responses:
// a summary (their quantiles, count and sum of latencies) and their mean. A
// step without one has nothing to measure: its quantiles and mean are NaN,
// as a summary without observations reports them, where a zero would read
// as the quickest level of the ramp.
func stepLatencySeries(ch chan<- prometheus.Metric, s *result.Step, name, level string) {
	successes := max(s.Succeeded(), 0)
	lat := s.Latency
	if successes == 0 {
		lat = unmeasured
	}
	quantiles := make(map[float64]float64, len(result.Quantiles))
	for _, q := range result.Quantiles {
		quantiles[q.Q] = q.Of(lat)
	}
	ch <- prometheus.MustNewConstSummary(stepLatency, uint64(successes), s.Latency.Mean*float64(successes), quantiles, name, level)
	gauge(ch, stepLatencyMean, lat.Mean, name, level)
	if b := s.LatencyBuckets; b != nil {
		count := b.Count()
		ch <- prometheus.MustNewConstNativeHistogram(stepLatencyHistogram, count, s.Latency.Mean*float64(count),
			b.Buckets, nil, b.Zero, b.Schema, 0, time.Time{}, name, level)
	}
}

// unmeasured is the latency of a step without a successful response.
var unmeasured = func() result.Latency {
	l := result.Latency{Mean: math.NaN()}
	for _, q := range result.Quantiles {
		*q.Field(&l) = math.NaN()
	}
	return l
}()
