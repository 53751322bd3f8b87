package plan

import (
	"time"

	"github.com/prometheus/common/model"
)

// Rules are the thresholds of the three breaking points.
type Rules struct {
	KneeFraction     float64        `yaml:"knee_fraction"`
	LatencyQuantile  float64        `yaml:"latency_quantile"`
	LatencyBudget    model.Duration `yaml:"latency_budget"`
	ErrorRatioBudget float64        `yaml:"error_ratio_budget"`
	// GeneratorCPUBudget is the generator_cpu_ratio at or above which a
	// step is generator-limited (docs/measurement.md).
	GeneratorCPUBudget float64 `yaml:"generator_cpu_budget"`
}

// Abort stops a ramp from escalating to protect the target.
type Abort struct {
	ErrorRatio float64 `yaml:"error_ratio"`
}

// Expect holds what `run` checks and the daemon exports: the capacity, and
// the p99 and error ratio of the level capacity was read at.
type Expect struct {
	MinCapacity float64        `yaml:"min_capacity,omitempty"`
	MaxP99      model.Duration `yaml:"max_p99,omitempty"`
	// MaxErrorRatio is nil when unset: 0 asks for no failed attempt.
	MaxErrorRatio *float64 `yaml:"max_error_ratio,omitempty"`
}

// Schedule says when the daemon runs a probe.
type Schedule struct {
	Interval   model.Duration `yaml:"interval"`
	Jitter     model.Duration `yaml:"jitter"`
	Continuous bool           `yaml:"continuous,omitempty"`
}

// DefaultRules are the rules of a probe that sets none: a knee at 95% of
// the peak, p99 within 200ms, no failed attempt, the generator's CPU below
// 90% of what it may use.
var DefaultRules = Rules{
	KneeFraction:       0.95,
	LatencyQuantile:    0.99,
	LatencyBudget:      model.Duration(200 * time.Millisecond),
	GeneratorCPUBudget: 0.9,
}
