package result

// Fleet is a run of a fleet of replicas (--shard i/N) as the replica with
// ordinal 0 reads it back from Prometheus after its own run: every shard's
// step figures of the run, summed level by level, judged with the same
// rules as one replica's (Analyze). A shard missing from the run makes
// the fleet's run invalid and leaves every figure that a missing shard
// would lower (peak, breaking points, capacity) out: it never reads as a
// lower capacity.
type Fleet struct {
	// Shards is the fleet's size N; Replicas the shards found at every
	// level of the run.
	Shards   int `json:"shards"`
	Replicas int `json:"replicas"`
	// Steps are the fleet's summed steps at the levels replica 0 ran.
	Steps          []Step         `json:"steps"`
	PeakThroughput float64        `json:"peak_throughput"`
	BreakingPoints BreakingPoints `json:"breaking_points"`
	// ReachedUpTo is the highest summed level a rule that did not fire
	// was measured up to, as in Result.
	ReachedUpTo float64 `json:"reached_up_to,omitzero"`
	Capacity    *Point  `json:"capacity"`
	Valid       bool    `json:"valid"`
	// MissingShards are the shards absent at one level of the run or more.
	MissingShards []int `json:"missing_shards"`
	// Problems say, in words, what made the fleet's run invalid.
	Problems []string `json:"problems"`
	// StepStartSkewSeconds is the largest spread of one step's start
	// across the shards: how closely the replicas stepped together.
	StepStartSkewSeconds float64 `json:"step_start_skew_seconds"`
	// LatencySource says what the steps' latency quantiles were read from,
	// and so their bound; "" when no step had a success.
	LatencySource LatencySource `json:"latency_source,omitempty"`
}

// LatencySource is what a fleet's latency quantiles were read from.
type LatencySource string

// The sources: the shards' native histograms, summed (each quantile
// within 1% of the exact one of all their samples), or their summaries,
// mixed (each quantile between the shards' own; docs/fleet.md).
const (
	LatencyNative    LatencySource = "native_histograms"
	LatencySummaries LatencySource = "summaries"
)

// Bound says, in words, how close the quantiles are to the exact ones.
func (s LatencySource) Bound() string {
	switch s {
	case LatencyNative:
		return "p99 ±1% (native histograms)"
	case LatencySummaries:
		return "p99 between the replicas' own (summaries)"
	}
	return ""
}
