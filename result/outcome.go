package result

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
	Closed                   // WebSocket: the server closed the session during the attempt
	Generator                // the generator ran out of file descriptors: the target saw nothing
	TooLarge                 // the request would render above config.MaxRequestBytes: not sent
	// ScriptFailed is a response the request's script failed with fail():
	// the target's failure (docs/scripts.md).
	ScriptFailed
	// Script is a script that erred or ran out of its bounds: the
	// generator's own, never the target's failure.
	Script
	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{"success", "http_error", "timeout", "refused", "reset", "tls", "dns", "other", "closed", "generator", "request_too_large", "script_failed", "script"}

func (o Outcome) String() string { return outcomeNames[o] }

// Responded reports whether the attempt got an HTTP response.
func (o Outcome) Responded() bool { return o == Success || o == HTTPError }

// Failed reports whether the attempt counts as failed: anything but a
// success, and but a script's own error, which says nothing of the target.
func (o Outcome) Failed() bool { return o != Success && o != Script }

// NoResponseReasons are the outcomes counted by reason, the keys of
// Step.Errors: those without a response, and a response a script failed.
var NoResponseReasons = [...]Outcome{Timeout, Refused, Reset, TLS, DNS, Other, Closed, Generator, TooLarge, ScriptFailed, Script}
