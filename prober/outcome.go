package prober

// Outcome is how one attempt ended; every attempt ends as exactly one.
type Outcome uint8

// The outcomes, as in loadprobe_requests_total{outcome}.
const (
	Success   Outcome = iota // a response with a valid status code
	HTTPError                // a response with any other status code
	Timeout                  // the client's own deadline passed first
	Refused                  // the connection was refused
	Reset                    // the connection was reset or closed before a response
	TLS                      // the TLS handshake failed
	DNS                      // the name did not resolve
	Other                    // anything else, e.g. a server that does not speak HTTP
	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{"success", "http_error", "timeout", "refused", "reset", "tls", "dns", "other"}

func (o Outcome) String() string { return outcomeNames[o] }

// Responded reports whether the attempt got an HTTP response.
func (o Outcome) Responded() bool { return o == Success || o == HTTPError }

// Live takes every attempt as it happens; the collector implements it with
// pre-resolved metric children, so each call is a few atomic adds.
type Live interface {
	// Attempt records one finished attempt; code is 0 when there was no response.
	Attempt(o Outcome, code int, latency float64)
	InFlight(delta int)
	Dropped()
	SendDelay(seconds float64)
	Concurrency(n int)
	OfferedRate(r float64)
}

// NopLive discards everything; for runs nobody scrapes.
type NopLive struct{}

func (NopLive) Attempt(Outcome, int, float64) {}
func (NopLive) InFlight(int)                  {}
func (NopLive) Dropped()                      {}
func (NopLive) SendDelay(float64)             {}
func (NopLive) Concurrency(int)               {}
func (NopLive) OfferedRate(float64)           {}
