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
	// WaitingFor names what a waiting run waits for: "127.0.0.1 is busy
	// with canary (continuous)", "max_concurrency 4096: 4000 connections
	// in use, 256 needed"; empty while it is not waiting, or before it
	// knows its hosts.
	WaitingFor string
	// Doing says what the step under way is for, in a search: "refining
	// the knee between 8 and 12"; empty otherwise.
	Doing string
	// History is the probe's last finished runs, oldest first, the last
	// one included, as the store keeps them (docs/commands.md, "History");
	// nil without a store, and for a continuous probe.
	History []HistoryRun
	// Next is when the next run is due; zero while a run waits or runs,
	// and for a continuous probe.
	Next time.Time
}

// HistoryRun is one finished run as a probe's history keeps it: what the
// capacity drift alerts follow, and where the knee was.
type HistoryRun struct {
	Started  time.Time `json:"started"`
	Ended    RunResult `json:"result"`
	Valid    bool      `json:"valid"`
	Capacity *Point    `json:"capacity"`
	Knee     *Point    `json:"knee"`
}

// HistoryOf is r as a history keeps it.
func HistoryOf(r Result) HistoryRun {
	return HistoryRun{Started: r.Started, Ended: r.Ended, Valid: r.Valid, Capacity: r.Capacity, Knee: r.BreakingPoints.Knee}
}
