package plan

import "strings"

// Protocol is what a probe speaks, as the result JSON's "protocol" says it:
// the words its levels and answers take.
type Protocol string

// The protocols. A flow speaks HTTP.
const (
	ProtocolHTTP       Protocol = "http"
	ProtocolGRPC       Protocol = "grpc"
	ProtocolGRPCStream Protocol = "grpc_stream"
	ProtocolWebSocket  Protocol = "websocket"
)

// Protocol is what p's requests speak.
func (p *Probe) Protocol() Protocol {
	switch {
	case p.Request == nil || p.Flow != nil:
		return ProtocolHTTP
	case p.Request.GRPC != nil && p.Request.GRPC.Stream != nil:
		return ProtocolGRPCStream
	case p.Request.GRPC != nil:
		return ProtocolGRPC
	case p.Request.WebSocket():
		return ProtocolWebSocket
	}
	return ProtocolHTTP
}

// Words name a run's levels as its load and its protocol have them, in run's
// table, the status page and the diagnosis alike: an HTTP probe's
// connections and req/s, a gRPC probe's streams (calls in flight) and
// calls/s, a gRPC stream probe's streams and messages/s, a WebSocket
// probe's sessions and messages/s.
type Words struct {
	Mode     Mode
	Protocol Protocol
}

// Words name p's levels.
func (p *Probe) Words() Words { return Words{Mode: p.Load.Mode(), Protocol: p.Protocol()} }

// Unit names what a level counts: "connections", "req/s", "sessions"…
func (w Words) Unit() string {
	closed := w.Mode.ClosedLoop()
	switch {
	case w.Protocol == ProtocolWebSocket && closed:
		return "sessions"
	case w.Protocol == ProtocolWebSocket:
		return "messages/s"
	case (w.Protocol == ProtocolGRPC || w.Protocol == ProtocolGRPCStream) && closed:
		return "streams"
	case w.Protocol == ProtocolGRPC:
		return "calls/s"
	case closed:
		return "connections"
	}
	return "req/s"
}

// Level names a level with its unit: "1 connection", "4 streams", "400 req/s".
func (w Words) Level(level float64) string {
	unit := w.Unit()
	if w.Mode.ClosedLoop() && level == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	return FormatLevel(level) + " " + unit
}
