package plan

import (
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// Guard stops a run while it is under way when the target suffers: the
// live guards judge each window of a step from the probe's own attempts,
// the Prometheus guards ask the Prometheus that watches the target
// (docs/guards.md).
type Guard struct {
	Window model.Duration `yaml:"window"`
	// ErrorRatio is the limit of a window's failed attempts / attempts;
	// 0: no error-ratio guard.
	ErrorRatio float64       `yaml:"error_ratio,omitempty"`
	Latency    *LatencyGuard `yaml:"latency,omitempty"`
	// For is how many consecutive windows over a limit stop the run.
	For        int              `yaml:"for"`
	Prometheus *PrometheusGuard `yaml:"prometheus,omitempty"`
}

// LatencyGuard is the limit of a window's latency quantile of successes.
type LatencyGuard struct {
	Quantile float64        `yaml:"quantile"`
	Max      model.Duration `yaml:"max"`
}

// OnError says what a failed, timed-out or empty guard query does.
type OnError string

// The answers to a query that gives no value.
const (
	OnErrorAbort  OnError = "abort"
	OnErrorIgnore OnError = "ignore"
)

// Prometheus is a Prometheus server loadprobe asks questions of: the one
// that watches a probe's target.
type Prometheus struct {
	URL string `yaml:"url"`
	// HTTPClientConfig is how to reach the Prometheus (TLS, basic auth,
	// bearer); a named field for the reason Request's is one.
	HTTPClientConfig commoncfg.HTTPClientConfig `yaml:",inline"`
}

// PrometheusGuard is the Prometheus that watches the target and the
// queries asked of it every Interval.
type PrometheusGuard struct {
	Prometheus `yaml:",inline"`
	Interval   model.Duration `yaml:"interval"`
	OnError    OnError        `yaml:"on_error"`
	Queries    []GuardQuery   `yaml:"queries"`
}

// GuardQuery is one PromQL query and the range its result must keep.
type GuardQuery struct {
	Name  string   `yaml:"name"`
	Query string   `yaml:"query"`
	Min   *float64 `yaml:"min,omitempty"`
	Max   *float64 `yaml:"max,omitempty"`
	For   int      `yaml:"for"`
}

// Live guard names: the `guard` label of their series, which a query's
// name must not take.
const (
	GuardErrorRatio = "error_ratio"
	GuardLatency    = "latency"
)

// Live reports whether g has a live guard to judge windows by.
func (g Guard) Live() bool { return g.ErrorRatio > 0 || g.Latency != nil }

// Outside reports whether value breaks q's range.
func (q GuardQuery) Outside(value float64) bool {
	return q.Min != nil && value < *q.Min || q.Max != nil && value > *q.Max
}
