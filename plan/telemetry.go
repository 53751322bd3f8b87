package plan

import "github.com/prometheus/common/model"

// Telemetry is what a probe reads of its target's own Prometheus after a
// run: the target's live traffic, against which its capacity is headroom,
// and the resources that can run out, read at the end of every step
// (docs/telemetry.md).
type Telemetry struct {
	Prometheus Prometheus `yaml:"prometheus"`
	// Traffic is a PromQL query of the target's live requests per second;
	// empty: no headroom.
	Traffic string `yaml:"traffic,omitempty"`
	// PeakWindow is how far back the live peak is looked for.
	PeakWindow model.Duration `yaml:"peak_window"`
	Saturation []Resource     `yaml:"saturation,omitempty"`
}

// Resource is one resource of the target that can run out: a query of how
// much of it is in use, and the value at and above which it is at its
// limit.
type Resource struct {
	Name  string  `yaml:"name"`
	Query string  `yaml:"query"`
	Max   float64 `yaml:"max"`
}
