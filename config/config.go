// Package config holds loadprobe's YAML schema, its defaults and its validation.
package config

import (
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// Config is the whole configuration file.
type Config struct {
	AllowedTargets []string `yaml:"allowed_targets"`
	MaxConcurrency int      `yaml:"max_concurrency"`
	MaxRate        float64  `yaml:"max_rate"`
	Probes         []Probe  `yaml:"probes"`
}

// Probe is one scheduled load probe.
type Probe struct {
	Name     string   `yaml:"name"`
	Request  Request  `yaml:"request"`
	Load     Load     `yaml:"load"`
	Rules    Rules    `yaml:"rules"`
	Abort    Abort    `yaml:"abort"`
	Control  string   `yaml:"control,omitempty"`
	Expect   Expect   `yaml:"expect"`
	Schedule Schedule `yaml:"schedule"`
}

// Request describes the HTTP request every attempt sends.
type Request struct {
	URL              string            `yaml:"url"`
	Method           string            `yaml:"method"`
	Headers          map[string]string `yaml:"headers,omitempty"`
	Body             string            `yaml:"body,omitempty"`
	BodyFile         string            `yaml:"body_file,omitempty"`
	Timeout          model.Duration    `yaml:"timeout"`
	KeepAlive        bool              `yaml:"keep_alive"`
	ValidStatusCodes []int             `yaml:"valid_status_codes,omitempty"`

	commoncfg.HTTPClientConfig `yaml:",inline"`
}

// Load says how much load a probe sends: exactly one of Concurrency, Rate and Phases.
type Load struct {
	Concurrency   []int          `yaml:"concurrency,omitempty"`
	Rate          []float64      `yaml:"rate,omitempty"`
	Phases        []Phase        `yaml:"phases,omitempty"`
	StepDuration  model.Duration `yaml:"step_duration"`
	Warmup        model.Duration `yaml:"warmup"`
	MaxInFlight   int            `yaml:"max_in_flight"`
	SettleTimeout model.Duration `yaml:"settle_timeout"`
}

// Phase is one part of an open-loop profile; with RampTo the rate moves
// linearly from Rate to RampTo over Duration.
type Phase struct {
	Name     string         `yaml:"name"`
	Duration model.Duration `yaml:"duration"`
	Rate     float64        `yaml:"rate"`
	RampTo   *float64       `yaml:"ramp_to,omitempty"`
}

// Rules are the thresholds of the three breaking points.
type Rules struct {
	KneeFraction     float64        `yaml:"knee_fraction"`
	LatencyQuantile  float64        `yaml:"latency_quantile"`
	LatencyBudget    model.Duration `yaml:"latency_budget"`
	ErrorRatioBudget float64        `yaml:"error_ratio_budget"`
}

// Abort stops a ramp from escalating to protect the target.
type Abort struct {
	ErrorRatio float64 `yaml:"error_ratio"`
}

// Expect holds what `run` checks and the daemon exports.
type Expect struct {
	MinCapacity float64 `yaml:"min_capacity,omitempty"`
}

// Schedule says when the daemon runs a probe.
type Schedule struct {
	Interval   model.Duration `yaml:"interval"`
	Jitter     model.Duration `yaml:"jitter"`
	Continuous bool           `yaml:"continuous,omitempty"`
}

// Mode names the kind of load, as in the result JSON.
const (
	ModeConcurrency = "concurrency"
	ModeRate        = "rate"
	ModePhases      = "phases"
)

// Mode reports which kind of load l holds.
func (l Load) Mode() string {
	switch {
	case len(l.Rate) > 0:
		return ModeRate
	case len(l.Phases) > 0:
		return ModePhases
	default:
		return ModeConcurrency
	}
}

// Defaults, applied before a section is decoded so that absent keys keep them.
var (
	DefaultConfig = Config{
		MaxConcurrency: 4096,
		MaxRate:        100000,
	}
	DefaultRequest = Request{
		Method:    "GET",
		Timeout:   model.Duration(time.Second),
		KeepAlive: true,
		// A load probe measures the URL it names: a redirect is a response,
		// counted by its code, unless follow_redirects says otherwise.
		HTTPClientConfig: commoncfg.HTTPClientConfig{FollowRedirects: false, EnableHTTP2: true},
	}
	DefaultLoad = Load{
		StepDuration:  model.Duration(5 * time.Second),
		MaxInFlight:   1000,
		SettleTimeout: model.Duration(30 * time.Second),
	}
	DefaultRules = Rules{
		KneeFraction:    0.95,
		LatencyQuantile: 0.99,
		LatencyBudget:   model.Duration(200 * time.Millisecond),
	}
	DefaultAbort    = Abort{ErrorRatio: 0.5}
	DefaultSchedule = Schedule{Interval: model.Duration(time.Hour)}
)
