package result

import "fmt"

// AbortBy says what stopped an aborted run: a live guard, a Prometheus
// guard, the pause switch, or abort.error_ratio after a level.
type AbortBy string

// The stoppers of a run (docs/guards.md).
const (
	ByLive       AbortBy = "live"
	ByPrometheus AbortBy = "prometheus"
	ByPause      AbortBy = "pause"
	ByErrorRatio AbortBy = "error_ratio"
)

// Abort is why a run was aborted, as the result JSON's "abort" holds it.
type Abort struct {
	By AbortBy `json:"by"`
	// Guard names the guard that fired ("error_ratio" or "latency" for a
	// live guard, the query's name for a Prometheus one); empty for pause.
	Guard string `json:"guard"`
	// Value is what the guard judged: the window's error ratio or latency
	// quantile in seconds, the query's result, the step's error ratio; 0
	// for pause and for a query that failed.
	Value float64 `json:"value"`
	// Level is the level under way when the load stopped, or the one due
	// next when it stopped between steps (before the first: the first).
	Level float64 `json:"level"`
	// AtSeconds is when the load stopped, from the start of the run.
	AtSeconds float64 `json:"at_seconds"`
}

// Text says in a line what stopped the run.
func (a Abort) Text() string {
	switch a.By {
	case ByPause:
		return "the pause switch"
	case ByPrometheus:
		return fmt.Sprintf("Prometheus guard %s at %.4g", a.Guard, a.Value)
	case ByErrorRatio:
		return fmt.Sprintf("abort.error_ratio at %.3g", a.Value)
	}
	return fmt.Sprintf("live guard %s at %.4g", a.Guard, a.Value)
}

// Stop is the cause a run's context ends with when a guard or the pause
// switch stops it: the engine reads it back with context.Cause and fills
// in the level and the time.
type Stop struct{ Abort Abort }

func (s *Stop) Error() string { return "stopped: " + s.Abort.Text() }
