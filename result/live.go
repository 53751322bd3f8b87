package result

// Live takes every attempt as it happens; the collector implements it with
// pre-resolved metric children, so each call is a few atomic adds.
type Live interface {
	// Attempt records one finished attempt; code is 0 when there was no response.
	Attempt(o Outcome, code Code, latency float64)
	InFlight(delta int)
	Dropped()
	SendDelay(seconds float64)
	Concurrency(n int)
	OfferedRate(r float64)
	// Step returns the Live of one step of a flow: its Attempt counts that
	// step's requests under the step label.
	Step(name string) Live
}

// NopLive discards everything; for runs nobody scrapes.
type NopLive struct{}

func (NopLive) Attempt(Outcome, Code, float64) {}
func (NopLive) InFlight(int)                   {}
func (NopLive) Dropped()                       {}
func (NopLive) SendDelay(float64)              {}
func (NopLive) Concurrency(int)                {}
func (NopLive) OfferedRate(float64)            {}
func (NopLive) Step(string) Live               { return NopLive{} }

// WebSocketLive takes what only WebSocket probes have. A Live that also
// implements it (the collector's does) gets every handshake and every
// close code; another gets nothing of them.
type WebSocketLive interface {
	// Handshake records one session opening: success, http_error (the
	// upgrade refused) or the transport failure; seconds is its duration.
	Handshake(o Outcome, seconds float64)
	// CloseCode counts a close frame the server sent during an attempt.
	CloseCode(code int)
}

// NopWebSocketLive discards handshakes and close codes.
type NopWebSocketLive struct{}

func (NopWebSocketLive) Handshake(Outcome, float64) {}
func (NopWebSocketLive) CloseCode(int)              {}

// GuardLive takes the guards' evaluations. A Live that also implements it
// (the collector's does) gets them; another gets nothing of them.
type GuardLive interface {
	// Guard records one evaluation of the named guard: its value and
	// whether it was outside its limits.
	Guard(name string, value float64, breached bool)
	// GuardError records an evaluation that gave no value: a failed,
	// timed-out or empty query.
	GuardError(name string)
}

// NopGuardLive discards the guards' evaluations.
type NopGuardLive struct{}

func (NopGuardLive) Guard(string, float64, bool) {}
func (NopGuardLive) GuardError(string)           {}
