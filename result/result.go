package result

import (
	"time"

	"github.com/loadprobe/loadprobe/plan"
)

// Result is one run of one probe, as served by /api/v1/results and `run --output=json`.
type Result struct {
	Name string    `json:"name"`
	Mode plan.Mode `json:"mode"`
	// Protocol is what the probe spoke: the words of its levels.
	Protocol        plan.Protocol  `json:"protocol,omitempty"`
	Ended           RunResult      `json:"result"`
	Started         time.Time      `json:"started"`
	DurationSeconds float64        `json:"duration_seconds"`
	Steps           []Step         `json:"steps"`
	PeakThroughput  float64        `json:"peak_throughput"`
	BreakingPoints  BreakingPoints `json:"breaking_points"`
	// ReachedUpTo is the highest level measured: how far the run looked
	// for a breaking point that is nil. Zero for phases.
	ReachedUpTo float64 `json:"reached_up_to,omitzero"`
	Capacity    *Point  `json:"capacity"`
	// Limiter is a limiter's pass rate when its codes dominate the
	// failures and the successes hold flat across levels; nil otherwise.
	Limiter *Limiter `json:"limiter"`
	// Overload is how the target served the levels past its capacity;
	// nil when the run measured none (or for phases).
	Overload *Overload `json:"overload"`
	// Bottleneck is the first declared resource at its limit at or below
	// the knee (else the first failure); nil when none reached it, or
	// without telemetry.
	Bottleneck *Bottleneck `json:"bottleneck"`
	// Headroom is the capacity over the target's live peak; nil without
	// telemetry's traffic or a capacity.
	Headroom *Headroom `json:"headroom"`
	// Model is the Universal Scalability Law fitted to the run's levels;
	// nil for a phases profile, which is not a ramp.
	Model *Model `json:"model"`
	// FallsPastPeak is true when goodput at a higher level than capacity's
	// fell more than 10% below it (docs/measurement.md, "Capacity").
	FallsPastPeak bool     `json:"falls_past_peak"`
	Valid         bool     `json:"valid"`
	Diagnosis     []string `json:"diagnosis"`
	// Abort says what stopped an aborted run; nil otherwise.
	Abort *Abort `json:"abort"`
	// Error says why a run failed or was aborted; empty otherwise.
	Error string `json:"error,omitempty"`
	// Compare is the verdict on a candidate measured beside this run, its
	// baseline; nil without one.
	Compare *Compare `json:"compare,omitempty"`
	// Fleet is the fleet's run, on the replica with ordinal 0 of a fleet
	// that reads it back (--fleet.prometheus-url); nil otherwise.
	Fleet *Fleet `json:"fleet,omitempty"`
}

// Point is a level of a ramp and the goodput measured there.
type Point struct {
	Level      float64 `json:"level"`
	Throughput float64 `json:"throughput"`
	// Bracket is a breaking point's [below, at]: the highest measured level
	// below Level, which kept the rule (0 when none was measured below), and
	// Level, which broke it. The breaking point lies in (below, at]. Zero,
	// and left out of the JSON, for capacity and for phases (a profile is
	// not ordered by level).
	Bracket [2]float64 `json:"bracket,omitzero"`
}

// Limiter is what a limiter let through: the goodput of the levels it
// declined, and the code it declined with ("429", "RESOURCE_EXHAUSTED").
type Limiter struct {
	Throughput float64 `json:"throughput"`
	Code       string  `json:"code"`
}

// Overload grades a target past its capacity, as Google's SRE book asks
// of a component: GoodputRetained is the lowest goodput of a level past
// capacity's over the capacity; Grade reads it (docs/measurement.md,
// "Past capacity").
type Overload struct {
	Grade           string  `json:"grade"`
	GoodputRetained float64 `json:"goodput_retained"`
	// RecoverySeconds is how long the target took to recover once the
	// load past its capacity ended (docs/measurement.md, "Recovery"); nil
	// when it did not within settle_timeout, or was not measured.
	RecoverySeconds *float64 `json:"recovery_seconds"`
}

// The overload grades, by GoodputRetained.
const (
	OverloadGraceful = "graceful" // at least 0.9
	OverloadDegraded = "degraded" // at least 0.5
	OverloadCollapse = "collapse" // below 0.5
)

// Bottleneck names the resource that ran out first: its value at the
// lowest level where it reached its limit (docs/telemetry.md,
// "Saturation and the bottleneck").
type Bottleneck struct {
	Resource string  `json:"resource"`
	Level    float64 `json:"level"`
	Value    float64 `json:"value"`
}

// Headroom is how far the capacity lies above the target's live traffic:
// Ratio is Capacity over LivePeak, the highest live traffic over Window;
// LiveNow is the live traffic as the run ended (docs/telemetry.md,
// "Headroom").
type Headroom struct {
	Ratio    float64 `json:"ratio"`
	Capacity float64 `json:"capacity"`
	LivePeak float64 `json:"live_peak"`
	LiveNow  float64 `json:"live_now"`
	Window   string  `json:"window"`
}

// Compare is the verdict on a candidate against its baseline: the
// candidate's capacity over the baseline's with its interval, and its p99
// at the baseline's capacity level over the baseline's (docs/compare.md).
type Compare struct {
	Verdict       string     `json:"verdict"`
	CapacityRatio float64    `json:"capacity_ratio"`
	Interval      [2]float64 `json:"interval"`
	// LatencyRatio is nil when the candidate did not run the baseline's
	// capacity level; LatencyInterval is nil without the windows an
	// interval needs.
	LatencyRatio    *float64    `json:"latency_ratio"`
	LatencyInterval *[2]float64 `json:"latency_interval"`
	// Reason says why the verdict is inconclusive or a fail.
	Reason string `json:"reason,omitempty"`
	// Candidate is the candidate's run, when it was measured beside the
	// baseline's.
	Candidate *Result `json:"candidate,omitempty"`
}

// The verdicts of a comparison.
const (
	VerdictPass         = "pass"
	VerdictFail         = "fail"
	VerdictInconclusive = "inconclusive"
)

// CapacityChange is the latest change point of a probe's capacity history:
// how many runs ago the new level began, and the mean capacity of the runs
// before and after it (docs/measurement.md, "Capacity changes").
type CapacityChange struct {
	RunsAgo       int
	Before, After float64
}

// Ratio is the mean after the change over the mean before it.
func (c CapacityChange) Ratio() float64 { return c.After / c.Before }

// BreakingPoints holds the three rules' answers; nil when a rule never fired.
type BreakingPoints struct {
	Knee          *Point `json:"knee"`
	LatencyBudget *Point `json:"latency_budget"`
	FirstFailure  *Point `json:"first_failure"`
}

// Step is the figures of one level (or one phase) of a run.
type Step struct {
	Level           float64 `json:"level"`
	Name            string  `json:"name"`
	DurationSeconds float64 `json:"duration_seconds"`
	Attempts        int64   `json:"attempts"`
	Throughput      float64 `json:"throughput"`
	Goodput         float64 `json:"goodput"`
	ErrorRatio      float64 `json:"error_ratio"`
	// Latency is over the successful responses only: what the latency rule
	// and capacity judge (a fast 503 must not make a level look quick).
	Latency Latency `json:"latency_seconds"`
	// ErrorLatency is over the http_error responses; nil when there were none.
	ErrorLatency *Latency `json:"error_latency_seconds"`
	// LatencyBuckets is Latency as a native histogram's buckets, for the
	// step's series (docs/metrics.md, "Per step"); nil without a success,
	// and in results read back from storage.
	LatencyBuckets *NativeBuckets `json:"-"`
	// Responses counts the responses by status code.
	Responses Codes `json:"responses"`
	// HTTPErrors counts the responses outside valid_status_codes (outcome
	// http_error) by status code: a part of Responses.
	HTTPErrors Codes `json:"http_errors"`
	// Errors counts the attempts without a response by reason.
	Errors        map[string]int64 `json:"errors"`
	InFlight      float64          `json:"in_flight"`
	LoadHeldRatio float64          `json:"load_held_ratio"`
	// ScriptError is the first error of the request's script in the step
	// (docs/scripts.md); "" when it erred in none.
	ScriptError   string  `json:"script_error,omitempty"`
	SettleSeconds float64 `json:"settle_seconds"`
	// GeneratorCPURatio is the process's CPU time over the step's load
	// divided by the CPU it may use in that time; 0 where not measured
	// (docs/measurement.md, "The generator watches itself").
	GeneratorCPURatio float64 `json:"generator_cpu_ratio"`
	// OverlappingRuns counts the other runs of the process whose load
	// overlapped the step's.
	OverlappingRuns int `json:"overlapping_runs"`
	// FileLimit is the generator's file-descriptor limit (RLIMIT_NOFILE)
	// when attempts of the step found no free descriptor (errors
	// "generator"); absent otherwise.
	FileLimit uint64   `json:"generator_fd_limit,omitempty"`
	PerSecond []Second `json:"per_second"`
	// Open loop only: scheduled requests not sent because max_in_flight was reached.
	Dropped int64 `json:"dropped,omitempty"`
	// Started is when the step's load began: the replicas of a fleet
	// compare it to see that they stepped together.
	Started time.Time `json:"started"`
	// Search is what a search measured the level for: SearchGrow or
	// SearchRefine; empty for the other loads.
	Search string `json:"search,omitempty"`
	// Cut marks a step that a guard or the pause switch stopped before
	// its end: its figures cover DurationSeconds only, and no breaking
	// point, capacity or model is taken from it.
	Cut bool `json:"cut,omitempty"`
	// Saturation is each declared resource's highest value over the
	// step's measured window; absent without telemetry.
	Saturation map[string]float64 `json:"saturation,omitempty"`
	// Flow holds a flow probe's figures of each of its steps (its Attempts
	// and the figures above count iterations); absent for a single request.
	Flow []FlowFigures `json:"flow,omitempty"`
}

// NativeBuckets are latencies in seconds as Prometheus's native histograms
// count them: bucket i holds the values in (2^((i-1)/2^Schema),
// 2^(i/2^Schema)], Zero those of 0.
type NativeBuckets struct {
	Schema  int32
	Zero    uint64
	Buckets map[int]int64
}

// Count is how many latencies the buckets hold.
func (b *NativeBuckets) Count() uint64 {
	n := b.Zero
	for _, c := range b.Buckets {
		n += uint64(c)
	}
	return n
}

// Latency is a latency distribution of a step's responses, in seconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Second counts the outcomes of one whole second of a step.
type Second struct {
	Second  int   `json:"second"`
	Success int64 `json:"success"`
	Failure int64 `json:"failure"`
	// P99 is the second's successes' p99 in seconds, kept by a comparison
	// (docs/compare.md, "The verdict"); 0, and left out, otherwise.
	P99 float64 `json:"p99,omitempty"`
}

// Whole is the steps that ran their full length: all but a cut last one.
func (r *Result) Whole() []Step {
	if n := len(r.Steps); n > 0 && r.Steps[n-1].Cut {
		return r.Steps[:n-1]
	}
	return r.Steps
}

// Succeeded is the number of successful responses, the ones Latency is over.
func (s Step) Succeeded() int64 { return s.Attempts - s.Failed() }

// Failed is the number of failed attempts: http_error responses and attempts
// without a response.
func (s Step) Failed() int64 {
	var n int64
	for _, v := range s.HTTPErrors {
		n += v
	}
	for _, v := range s.Errors {
		n += v
	}
	return n
}
