// Package live is the engine's output port: what a run reports as it
// happens, attempt by attempt, for the live metrics (the collector
// implements it) and for the guards. It is apart from the engine so that
// whoever implements it does not import the engine.
package live

import (
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// Sink takes every attempt as it happens; the collector implements it with
// pre-resolved metric children, so each call is a few atomic adds.
type Sink interface {
	// Attempt records one finished attempt; code is 0 when there was no response.
	Attempt(o result.Outcome, code result.Code, latency float64)
	InFlight(delta int)
	Dropped()
	SendDelay(seconds float64)
	Concurrency(n int)
	OfferedRate(r float64)
	// Step returns the Sink of one step of a flow: its Attempt counts that
	// step's requests under the step label.
	Step(name string) Sink
}

// Nop discards everything; for runs nobody scrapes.
type Nop struct{}

func (Nop) Attempt(result.Outcome, result.Code, float64) {}
func (Nop) InFlight(int)                                 {}
func (Nop) Dropped()                                     {}
func (Nop) SendDelay(float64)                            {}
func (Nop) Concurrency(int)                              {}
func (Nop) OfferedRate(float64)                          {}
func (Nop) Step(string) Sink                             { return Nop{} }

// Handshakes takes what only WebSocket probes have. A Sink that also
// implements it (the collector's does) gets every handshake and every
// close code; another gets nothing of them.
type Handshakes interface {
	// Handshake records one session opening: success, http_error (the
	// upgrade refused) or the transport failure; seconds is its duration.
	Handshake(o result.Outcome, seconds float64)
	// CloseCode counts a close frame the server sent during an attempt.
	CloseCode(code int)
}

// NopHandshakes discards handshakes and close codes.
type NopHandshakes struct{}

func (NopHandshakes) Handshake(result.Outcome, float64) {}
func (NopHandshakes) CloseCode(int)                     {}

// Streams takes what only gRPC stream probes have. A Sink that also
// implements it (the collector's does) gets every stream opened and every
// stream that ended early; another gets nothing of them.
type Streams interface {
	// StreamOpened records one stream opening: success, or the transport
	// failure.
	StreamOpened(o result.Outcome)
	// StreamEnded records a stream that ended before its step did: by the
	// server's status (http_error with its code, or closed: OK before the
	// end) or by a failure (timeout, reset…).
	StreamEnded(o result.Outcome, code result.Code)
}

// NopStreams discards streams.
type NopStreams struct{}

func (NopStreams) StreamOpened(result.Outcome)             {}
func (NopStreams) StreamEnded(result.Outcome, result.Code) {}

// Guards takes the guards' evaluations. A Sink that also implements it
// (the collector's does) gets them; another gets nothing of them.
type Guards interface {
	// Guard records one evaluation of the named guard: its value and
	// whether it was outside its limits.
	Guard(name string, value float64, breached bool)
	// GuardError records an evaluation that gave no value: a failed,
	// timed-out or empty query.
	GuardError(name string)
	// Stopped records that a guard stopped the run that started at run (a
	// fleet's run: its aligned start), for the fleet's other replicas to
	// stop it too.
	Stopped(run time.Time)
}

// NopGuards discards the guards' evaluations.
type NopGuards struct{}

func (NopGuards) Guard(string, float64, bool) {}
func (NopGuards) GuardError(string)           {}
func (NopGuards) Stopped(time.Time)           {}
