package plan

// Compare runs every level of a probe on its baseline, the request's URL,
// and on a candidate, and judges whether the candidate lost capacity
// (docs/compare.md).
type Compare struct {
	// Candidate is the candidate's scheme://host:port; the rest of the
	// request is the baseline's.
	Candidate string `yaml:"candidate"`
	// MaxLoss: the candidate fails when its capacity is surely below
	// 1 − MaxLoss of the baseline's.
	MaxLoss float64 `yaml:"max_loss"`
	// MaxLatencyGain: its p99 at the baseline's capacity level may be at
	// most 1 + MaxLatencyGain of the baseline's.
	MaxLatencyGain float64 `yaml:"max_latency_gain"`
	// Confidence is the level of the ratios' intervals.
	Confidence float64 `yaml:"confidence"`
}

// DefaultCompare is a compare section's defaults.
var DefaultCompare = Compare{MaxLoss: 0.05, MaxLatencyGain: 0.1, Confidence: 0.95}
