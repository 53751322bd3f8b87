package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// Options wires a run to whoever watches it.
type Options struct {
	Live     live.Sink           // live metrics; live.Nop when nil
	Progress func(Progress)      // called about twice a second while a step runs
	OnStep   func(result.Result) // called after each step with the run so far
	Shard    fleet.Shard         // this replica's part of a fleet; zero: all of every level
	// Fleet, on a replica of a fleet, is where an aligned run watches its
	// peers' guards, to stop when one of theirs stops it (docs/fleet.md,
	// "Fleet guards"); nil: none.
	Fleet *fleet.Prometheus
	// Align is the wall-clock boundary an aligned run starts at, its steps
	// at fixed offsets from it (docs/fleet.md, "Aligned runs and steps");
	// zero: each step starts as soon as the last one has settled.
	Align time.Time
	// FleetSteps, on a replica of a fleet, reads the fleet's steps for its
	// search to choose from (fleetsearch.go); nil: none.
	FleetSteps FleetSteps
	// Overlapping, when set, counts the other runs of the process whose
	// load overlapped this one's since a time: a step records it as
	// overlapping_runs (docs/measurement.md). The scheduler sets it.
	Overlapping func(since time.Time) int

	// Tests on virtual time (testing/synctest) run without the open loop's
	// timerfd alarm, which the bubble's clock cannot wait for, and read the
	// generator's CPU from a clock of their own, as real CPU does not
	// follow the bubble's (nil: the process's).
	noAlarm bool
	cpu     func() time.Duration
	// loopsFrom is the least rate the open loop's event loops send at
	// (open_loop.go): 0 for the dense schedules that are theirs, +Inf for
	// none; tests set it to judge the loops at any rate.
	loopsFrom float64
	// candidate is the workload of a comparison's candidate (compare.go);
	// nil without one.
	candidate workload
	// timesSeconds keeps each second's p99, the sections of a
	// comparison's latency verdict: set on both sides of one.
	timesSeconds bool
}

// Progress is what a watcher sees of a run under way.
type Progress struct {
	Probe string
	Step  int // 1-based
	Steps int // at most, for a search
	Level float64
	Name  string // phase name, if any
	// Search says what a search measures the level for: "refining the knee
	// between 8 and 12"; empty for the other loads.
	Search    string
	Elapsed   time.Duration
	Remaining time.Duration // an estimate: the steps left at step_duration each
	Requests  int64         // attempts so far in the run
}
