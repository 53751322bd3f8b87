package result

// FlowFigures is the figures of one step of a flow at one level: every
// attempt of the step, whichever iteration it belonged to. A step after
// one that failed is not attempted in that iteration.
type FlowFigures struct {
	Name       string  `json:"name"`
	Attempts   int64   `json:"attempts"`
	ErrorRatio float64 `json:"error_ratio"`
	// Latency is over the step's successful responses.
	Latency   Latency `json:"latency_seconds"`
	Responses Codes   `json:"responses"`
	// HTTPErrors counts the responses that failed the step by status code:
	// outside valid_status_codes, or without the value a capture takes.
	HTTPErrors Codes            `json:"http_errors"`
	Errors     map[string]int64 `json:"errors"`
	// CaptureMisses counts by status code the responses, among HTTPErrors,
	// that came with a valid code but without a value the step captures.
	CaptureMisses Codes `json:"capture_misses"`
}
