package config

import (
	"slices"

	"github.com/loadprobe/loadprobe/plan"
)

// GRPCStream makes each user of a gRPC probe a stream of a streaming
// method (docs/grpc.md, "Streams"): grpc.stream.
type GRPCStream struct {
	// Kind is bidi, client or server: which sides stream.
	Kind string `yaml:"kind"`
	// MessagesPerSecond is each bidi or client stream's schedule.
	MessagesPerSecond float64 `yaml:"messages_per_second,omitempty"`
	// MaxInFlightPerStream bounds a stream's unanswered messages: one
	// scheduled beyond it is dropped.
	MaxInFlightPerStream int `yaml:"max_in_flight_per_stream"`
	// Match names the field a bidi reply echoes of the message it
	// answers; "" pairs replies with messages in order.
	Match string `yaml:"match,omitempty"`
}

// defaultGRPCStream is a stream section's defaults: 100 unanswered
// messages a stream, a second's worth at 100 a second.
var defaultGRPCStream = GRPCStream{MaxInFlightPerStream: 100}

// Bounds of a stream's schedule: a stream sends from one goroutine, which
// keeps up with 100 000 messages a second on loopback; beyond, more
// streams are the way.
const (
	maxStreamRate     = 100_000
	maxStreamInFlight = 100_000
)

var streamKinds = []string{string(plan.StreamBidi), string(plan.StreamClient), string(plan.StreamServer)}

// grpcStream checks a probe's grpc.stream: its schedule, and that its
// load is streams open at once (concurrency, or a search of it).
func (v *validator) grpcStream(p *Probe, pp keyPath) {
	g := p.Request.GRPC
	if g == nil || g.Stream == nil {
		return
	}
	s, sp := g.Stream, pp.to("request", "grpc", "stream")
	kind := plan.StreamKind(s.Kind)
	switch {
	case !slices.Contains(streamKinds, s.Kind):
		v.errorf(sp.to("kind"), "must be bidi, client or server (got %q)", s.Kind)
	case kind == plan.StreamServer && s.MessagesPerSecond != 0:
		v.errorf(sp.to("messages_per_second"), "applies to bidi and client streams: a server stream sends at the server's pace")
	case kind != plan.StreamServer && (s.MessagesPerSecond <= 0 || s.MessagesPerSecond > maxStreamRate):
		v.errorf(sp.to("messages_per_second"), "must be above 0 and at most %d (got %g)", maxStreamRate, s.MessagesPerSecond)
	}
	if s.MaxInFlightPerStream < 1 || s.MaxInFlightPerStream > maxStreamInFlight {
		v.errorf(sp.to("max_in_flight_per_stream"), "must be from 1 to %d (got %d)", maxStreamInFlight, s.MaxInFlightPerStream)
	}
	if s.Match != "" && kind != plan.StreamBidi {
		v.errorf(sp.to("match"), "applies to bidi streams: only their replies answer a message")
	}
	if g.Health != nil {
		v.errorf(sp, "a health check is a unary call")
	}
	l := p.Load
	if l.Rate != nil || l.Phases != nil || l.Search != nil && l.Search.Rate != nil {
		v.errorf(pp.to("load"), "a stream probe's level is streams open at once: concurrency, or a search of concurrency")
	}
}

// compileStream is the plan of a stream section; nil for a unary call.
func compileStream(s *GRPCStream) *plan.GRPCStream {
	if s == nil {
		return nil
	}
	return &plan.GRPCStream{Kind: plan.StreamKind(s.Kind), MessagesPerSecond: s.MessagesPerSecond,
		MaxInFlight: s.MaxInFlightPerStream, Match: s.Match}
}
