package plan

import (
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/loadprobe/loadprobe/config/template"
)

// HealthMethod is the method a health probe calls.
const HealthMethod = "grpc.health.v1.Health/Check"

// GRPC is a gRPC call, compiled (docs/grpc.md): unary, or a stream when
// Stream is set.
type GRPC struct {
	// Method is package.Service/Method: HealthMethod for a health check.
	Method string
	// Health is the service a health check asks about ("" for the
	// server as a whole); nil for a call of Method.
	Health *string
	// Message writes the JSON of the method's input message.
	Message *template.Template
	// Metadata is sent with every call, keys in order.
	Metadata []Field
	// Descriptors is the descriptor set the config names, parsed once;
	// nil: the server is asked by reflection when a run starts.
	Descriptors *protoregistry.Files
	// Connections is how many HTTP/2 connections the calls in flight share.
	Connections int
	// Stream makes each user a stream of a streaming method; nil for a
	// unary call.
	Stream *GRPCStream
}

// StreamKind is which sides of a streaming call send a stream of messages.
type StreamKind string

// The kinds of stream, as grpc.stream.kind spells them.
const (
	StreamBidi   StreamKind = "bidi"
	StreamClient StreamKind = "client"
	StreamServer StreamKind = "server"
)

// GRPCStream is how a user drives its stream (docs/grpc.md, "Streams"):
// a client or bidi stream sends MessagesPerSecond on an absolute
// schedule, at most MaxInFlight unanswered; a bidi reply answers the
// message whose Match field it echoes, or the oldest unanswered one when
// Match is "".
type GRPCStream struct {
	Kind              StreamKind
	MessagesPerSecond float64
	MaxInFlight       int
	Match             string
}

// Size is the most bytes a call's message and metadata render to with v's
// values; v nil counts values for nothing. MaxRequestBytes bounds it, as
// it bounds an HTTP request.
func (g *GRPC) Size(v *template.Vars) int64 {
	n := g.Message.Size(v)
	for _, f := range g.Metadata {
		n += FieldSize(f.Name, f.Value, v)
	}
	return n
}
