package analysis

import (
	"fmt"

	"github.com/loadprobe/loadprobe/result"
)

// headroom is how many times the probe's peak the control must have reached
// for the generator to be cleared: a generator that answered a route doing
// no work at twice the rate was not what stopped the probe.
const headroom = 2

// MarkControl compares a run with the run of its control probe, a route that
// does no work (docs/design.md, "The control probe"). When the control stopped scaling at or
// before the level where the probe did, at a rate not far above the probe's,
// the knee belongs to the generator, not to the server: the run is marked
// invalid and the diagnosis says so. A control that stopped scaling at the
// same level but at many times the probe's rate saturated the machine
// (generator and target share it on loopback) long after the probe's
// server did: that knee is the server's.
func MarkControl(r *result.Result, control result.Result) {
	ck, k := control.BreakingPoints.Knee, r.BreakingPoints.Knee
	if ck == nil || k == nil || len(control.Steps) == 0 {
		return
	}
	last := control.Steps[len(control.Steps)-1].Level
	if ck.Level >= last || ck.Level > k.Level {
		return // the control kept scaling past the probe's knee
	}
	if control.PeakThroughput >= headroom*r.PeakThroughput {
		return // the generator had room to spare
	}
	r.Valid = false
	r.Diagnosis = append(r.Diagnosis, fmt.Sprintf(
		"generator-limited: the control probe %q stopped scaling at level %g too (%.0f/s), so the knee at %g is the generator's, not the server's",
		control.Name, ck.Level, ck.Throughput, k.Level))
}
