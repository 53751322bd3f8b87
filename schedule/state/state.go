// Package state is what the daemon knows of each configured probe: its
// plan, its last and current runs, its history and its schedule. The
// scheduler keeps it; the collector and the status page read snapshots of
// it.
package state

import (
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Probe is what the daemon knows of one configured probe.
type Probe struct {
	Probe         *plan.Probe
	Last          *result.Result // latest finished run (not canceled), nil before the first
	Current       *result.Result // run under way with the steps finished so far, nil when idle
	LastCompleted time.Time      // end of the last completed run; zero: never
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
	// nil for a continuous probe.
	History []Run
	// Change is the latest change point of the capacities of History's
	// completed valid runs; nil without one.
	Change *result.CapacityChange
	// Next is when the next run is due; zero while a run waits or runs,
	// and for a continuous probe.
	Next time.Time
}

// Run is one finished run as a probe's history keeps it: what the
// capacity drift alerts follow, and where the knee was.
type Run struct {
	Started  time.Time        `json:"started"`
	Ended    result.RunResult `json:"result"`
	Valid    bool             `json:"valid"`
	Capacity *result.Point    `json:"capacity"`
	Knee     *result.Point    `json:"knee"`
}

// RunOf is r as a history keeps it.
func RunOf(r result.Result) Run {
	return Run{Started: r.Started, Ended: r.Ended, Valid: r.Valid, Capacity: r.Capacity, Knee: r.BreakingPoints.Knee}
}
