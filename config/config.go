package config

import (
	"crypto/sha256"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/loadprobe/loadprobe/plan"
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

	hash  string        // Hash's; set by Parse
	plans []*plan.Probe // Probes compiled, in order; set by Parse
	// rows are the data files read, by path and content: a reload takes an
	// unchanged file's rows from the config in force (docs/templates.md,
	// "Data").
	rows map[keptData]*plan.Rows
	// sets are the descriptor sets parsed, by content: every probe naming
	// one shares it, and a reload takes an unchanged one from the config
	// in force (docs/grpc.md, "Descriptors").
	sets map[[sha256.Size]byte]*protoregistry.Files
}

// Probe is one scheduled load probe.
type Probe struct {
	Name    string     `yaml:"name"`
	Request Request    `yaml:"request,omitempty"`
	Flow    []FlowStep `yaml:"flow,omitempty"`
	Data    *Data      `yaml:"data,omitempty"`
	Load    plan.Load  `yaml:"load"`
	Rules   plan.Rules `yaml:"rules"`
	Abort   plan.Abort `yaml:"abort"`
	Guard   plan.Guard `yaml:"guard"`
	// Telemetry is what to read of the target's own Prometheus; nil
	// without one.
	Telemetry *plan.Telemetry `yaml:"telemetry,omitempty"`
	// Compare measures a candidate beside the request's URL, its
	// baseline; nil without one.
	Compare  *Compare      `yaml:"compare,omitempty"`
	Control  string        `yaml:"control,omitempty"`
	Expect   plan.Expect   `yaml:"expect"`
	Schedule plan.Schedule `yaml:"schedule"`
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
	// HTTP3 sends over QUIC (docs/http3.md); HTTP3Connections is how
	// many QUIC connections a level's requests share, 0: one a worker.
	HTTP3            bool `yaml:"http3,omitempty"`
	HTTP3Connections int  `yaml:"http3_connections,omitempty"`
	// Script is a Starlark file, relative to the config, that rewrites
	// each attempt and reads its response (docs/scripts.md).
	Script string `yaml:"script,omitempty"`
	// GRPC makes the request a unary gRPC call (docs/grpc.md); nil for HTTP
	// and WebSocket.
	GRPC *GRPC `yaml:"grpc,omitempty"`

	// HTTPClientConfig is a named field, not an embedded one, so that its
	// String and UnmarshalJSON are not promoted onto Request.
	HTTPClientConfig commoncfg.HTTPClientConfig `yaml:",inline"`
}

// HTTP2 holds the settings of the lean HTTP/2 client (docs/configuration.md,
// "Which client sends the requests").
type HTTP2 struct {
	// StreamsPerConnection is how many of a level's workers share one
	// HTTP/2 connection, each with a stream of its own: 1 keeps a
	// closed-loop level a number of connections.
	StreamsPerConnection int `yaml:"streams_per_connection"`
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
	defaultLoad = plan.Load{
		StepDuration:  model.Duration(5 * time.Second),
		MaxInFlight:   1000,
		SettleTimeout: model.Duration(30 * time.Second),
	}
	// defaultSearch is a search section's defaults: each breaking point
	// within 10%, in at most 24 levels (a doubling ramp 1…1024 measures 11).
	defaultSearch   = plan.Search{Precision: 0.1, MaxSteps: 24}
	defaultAbort    = plan.Abort{ErrorRatio: 0.5}
	defaultSchedule = plan.Schedule{Interval: model.Duration(time.Hour)}
	// DefaultProbe holds the defaults of every section: each probe starts
	// from it, so a probe that leaves a section or a key out gets them.
	DefaultProbe = Probe{
		Request:  DefaultRequest,
		Load:     defaultLoad,
		Rules:    plan.DefaultRules,
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

// Plans are the probes compiled, in the order of Probes: what the daemon
// and `run` run.
func (c *Config) Plans() []*plan.Probe { return c.plans }

// Plan returns the compiled probe called name.
func (c *Config) Plan(name string) (*plan.Probe, bool) {
	for _, p := range c.plans {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}
