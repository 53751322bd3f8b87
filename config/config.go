package config

import (
	"slices"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// Config is the whole configuration file.
type Config struct {
	AllowedTargets []string `yaml:"allowed_targets"`
	MaxConcurrency int      `yaml:"max_concurrency"`
	MaxRate        float64  `yaml:"max_rate"`
	// MaxParallelRuns bounds the ramps, searches and profiles of this
	// process under way at once: two of them share one generator's CPU, and
	// each would read the other's load as the target's (docs/measurement.md).
	MaxParallelRuns int     `yaml:"max_parallel_runs"`
	Probes          []Probe `yaml:"probes"`

	hash string // Hash's; set by Parse
}

// Probe is one scheduled load probe.
type Probe struct {
	Name     string     `yaml:"name"`
	Request  Request    `yaml:"request,omitempty"`
	Flow     []FlowStep `yaml:"flow,omitempty"`
	Data     *Data      `yaml:"data,omitempty"`
	Load     Load       `yaml:"load"`
	Rules    Rules      `yaml:"rules"`
	Abort    Abort      `yaml:"abort"`
	Guard    Guard      `yaml:"guard"`
	Control  string     `yaml:"control,omitempty"`
	Expect   Expect     `yaml:"expect"`
	Schedule Schedule   `yaml:"schedule"`
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
	HTTP2            HTTP2             `yaml:"http2"`
	// GRPC makes the request a unary gRPC call (grpc.go); nil for HTTP
	// and WebSocket.
	GRPC *GRPC `yaml:"grpc,omitempty"`

	// HTTPClientConfig is a named field, not an embedded one, so that its
	// String and UnmarshalJSON are not promoted onto Request.
	HTTPClientConfig commoncfg.HTTPClientConfig `yaml:",inline"`

	// Payload is the request body: Body, or the contents of BodyFile read
	// when the config was loaded, so the engine never reads a file. Parse
	// and Compile set it; a probe built in Go sets Body or BodyFile.
	Payload []byte `yaml:"-"`
	// payloadOf is the BodyFile whose contents Payload holds: compiling
	// the probe again does not read the file again.
	payloadOf string
	// Templates holds the parts of the request that vary per attempt,
	// compiled at load (template.go); nil when none does.
	Templates *RequestTemplates `yaml:"-"`
}

// HTTP2 holds the settings of the lean HTTP/2 client (docs/configuration.md,
// "Which client sends the requests").
type HTTP2 struct {
	// StreamsPerConnection is how many of a level's workers share one
	// HTTP/2 connection, each with a stream of its own: 1 keeps a
	// closed-loop level a number of connections.
	StreamsPerConnection int `yaml:"streams_per_connection"`
}

// Load says how much load a probe sends: exactly one of Concurrency, Rate,
// Phases and Search.
type Load struct {
	Concurrency   []int          `yaml:"concurrency,omitempty"`
	Rate          []float64      `yaml:"rate,omitempty"`
	Phases        []Phase        `yaml:"phases,omitempty"`
	Search        *Search        `yaml:"search,omitempty"`
	StepDuration  model.Duration `yaml:"step_duration"`
	Warmup        model.Duration `yaml:"warmup"`
	MaxInFlight   int            `yaml:"max_in_flight"`
	SettleTimeout model.Duration `yaml:"settle_timeout"`
	// Sessions bounds the sessions an open-loop WebSocket load spreads its
	// messages over; 0: as many as needed (up to max_in_flight).
	Sessions int `yaml:"sessions,omitempty"`
}

// Phase is one part of an open-loop profile; with RampTo the rate moves
// linearly from Rate to RampTo over Duration.
type Phase struct {
	Name     string         `yaml:"name"`
	Duration model.Duration `yaml:"duration"`
	Rate     float64        `yaml:"rate"`
	RampTo   *float64       `yaml:"ramp_to,omitempty"`
}

// Search finds each breaking point to a precision instead of measuring a
// fixed list of levels (docs/search.md): on exactly one axis, Concurrency
// (connections, closed loop) or Rate (requests per second, open loop).
type Search struct {
	Concurrency *SearchRange `yaml:"concurrency,omitempty"`
	Rate        *SearchRange `yaml:"rate,omitempty"`
	// Precision is how close the two ends of a breaking point's bracket
	// must be, as a fraction of its level.
	Precision float64 `yaml:"precision"`
	// MaxSteps bounds the levels one run measures.
	MaxSteps int `yaml:"max_steps"`
	// Line is where the search key stands in the config file, for the
	// errors found once the file is loaded (CheckShard).
	Line int `yaml:"-"`
}

// SearchRange is where a search starts and the level it never goes above.
type SearchRange struct {
	From float64 `yaml:"from"`
	Max  float64 `yaml:"max"`
}

// Range is the search's range on its axis.
func (s *Search) Range() SearchRange {
	if s.Concurrency != nil {
		return *s.Concurrency
	}
	if s.Rate != nil {
		return *s.Rate
	}
	return SearchRange{}
}

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

// Mode reports which kind of load l holds, as its steps count levels: a
// search reports its axis, ModeConcurrency or ModeRate (Kind says it
// searches).
func (l Load) Mode() Mode {
	switch {
	case l.Search != nil && l.Search.Rate != nil:
		return ModeRate
	case len(l.Rate) > 0:
		return ModeRate
	case len(l.Phases) > 0:
		return ModePhases
	default:
		return ModeConcurrency
	}
}

// Kind is what the config says the probe is, as loadprobe_probe_info{mode}
// names it: its Mode, or ModeSearch for a search.
func (l Load) Kind() Mode {
	if l.Search != nil {
		return ModeSearch
	}
	return l.Mode()
}

// Peak is the highest load l asks for: connections for a concurrency ramp,
// requests per second otherwise (a phase's ramp_to, a search's max included).
func (l Load) Peak() float64 {
	var peak float64
	if l.Search != nil {
		peak = l.Search.Range().Max
	}
	for _, c := range l.Concurrency {
		peak = max(peak, float64(c))
	}
	for _, r := range l.Rate {
		peak = max(peak, r)
	}
	for _, ph := range l.Phases {
		peak = max(peak, ph.Rate)
		if ph.RampTo != nil {
			peak = max(peak, *ph.RampTo)
		}
	}
	return peak
}

// Defaults: a key absent from the file keeps its default (see decoder).
var (
	defaultConfig = Config{
		MaxConcurrency:  4096,
		MaxRate:         100000,
		MaxParallelRuns: 1,
	}
	DefaultRequest = Request{
		Method:    "GET",
		Timeout:   model.Duration(time.Second),
		KeepAlive: true,
		HTTP2:     HTTP2{StreamsPerConnection: 1},
		// A load probe measures the URL it names: a redirect is a response,
		// counted by its code, unless follow_redirects says otherwise.
		HTTPClientConfig: commoncfg.HTTPClientConfig{FollowRedirects: false, EnableHTTP2: true},
	}
	defaultLoad = Load{
		StepDuration:  model.Duration(5 * time.Second),
		MaxInFlight:   1000,
		SettleTimeout: model.Duration(30 * time.Second),
	}
	DefaultRules = Rules{
		KneeFraction:       0.95,
		LatencyQuantile:    0.99,
		LatencyBudget:      model.Duration(200 * time.Millisecond),
		GeneratorCPUBudget: 0.9,
	}
	// defaultSearch is a search section's defaults: each breaking point
	// within 10%, in at most 24 levels (a doubling ramp 1…1024 measures 11).
	defaultSearch   = Search{Precision: 0.1, MaxSteps: 24}
	defaultAbort    = Abort{ErrorRatio: 0.5}
	defaultSchedule = Schedule{Interval: model.Duration(time.Hour)}
	// DefaultProbe holds the defaults of every section: each probe starts
	// from it, so a probe that leaves a section or a key out gets them.
	DefaultProbe = Probe{
		Request:  DefaultRequest,
		Load:     defaultLoad,
		Rules:    DefaultRules,
		Abort:    defaultAbort,
		Guard:    defaultGuard,
		Schedule: defaultSchedule,
	}
)

// Probe returns the probe called name.
func (c *Config) Probe(name string) (Probe, bool) {
	for _, p := range c.Probes {
		if p.Name == name {
			return p, true
		}
	}
	return Probe{}, false
}

// ValidCode reports whether a response with this status code is a success:
// one of valid_status_codes, or any 2xx when that list is empty. The client
// tabulates it once per run, not per response.
func (r Request) ValidCode(code int) bool {
	if len(r.ValidStatusCodes) == 0 {
		return code >= 200 && code <= 299
	}
	return slices.Contains(r.ValidStatusCodes, code)
}
