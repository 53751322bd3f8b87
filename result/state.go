package result

import (
	"time"

	"github.com/loadprobe/loadprobe/config"
)

// ProbeState is what the daemon knows of one configured probe.
type ProbeState struct {
	Probe         config.Probe
	Last          *Result   // latest finished run (not canceled), nil before the first
	Current       *Result   // run under way with the steps finished so far, nil when idle
	LastCompleted time.Time // end of the last completed run; zero: never
	// Waiting is true while a run waits for its host to be free or for
	// room under max_concurrency / max_rate.
	Waiting bool
	// Doing says what the step under way is for, in a search: "refining
	// the knee between 8 and 12"; empty otherwise.
	Doing string
	// Next is when the next run is due; zero while a run waits or runs,
	// and for a continuous probe.
	Next time.Time
}
