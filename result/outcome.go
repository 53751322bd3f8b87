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
	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{"success", "http_error", "timeout", "refused", "reset", "tls", "dns", "other", "closed", "generator", "request_too_large"}

func (o Outcome) String() string { return outcomeNames[o] }

// Responded reports whether the attempt got an HTTP response.
func (o Outcome) Responded() bool { return o == Success || o == HTTPError }

// NoResponseReasons are the outcomes without a response, the keys of
// Step.Errors.
var NoResponseReasons = [...]Outcome{Timeout, Refused, Reset, TLS, DNS, Other, Closed, Generator, TooLarge}
