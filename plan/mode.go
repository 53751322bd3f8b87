package plan

import "strconv"

// Mode is the kind of load a probe puts on its target, as the result JSON's
// "mode" and loadprobe_probe_info{mode} spell it: the one home of that
// vocabulary, which result, run's table and the status page read.
type Mode string

// The modes.
const (
	ModeConcurrency Mode = "concurrency" // closed loop: levels are connections
	ModeRate        Mode = "rate"        // open loop: levels are requests per second
	ModePhases      Mode = "phases"      // open loop: a profile of named phases
	// ModeSearch is the Key of a probe whose load is a capacity search; its
	// results and steps read its axis, ModeConcurrency or ModeRate.
	ModeSearch Mode = "search"
)

// ClosedLoop reports whether each level is a number of connections, each
// sending its next request when the last one ended.
func (m Mode) ClosedLoop() bool { return m == ModeConcurrency }

// FormatLevel is a level as configured, exactly: "512", "2.5". It is the
// level label value of the step series, so two levels never read the same.
func FormatLevel(level float64) string { return strconv.FormatFloat(level, 'f', -1, 64) }
