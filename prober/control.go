package prober

import "fmt"

// MarkControl compares a run with the run of its control probe, a route that
// does no work (DESIGN.md, point 4). When the control stopped scaling at or
// before the level where the probe did, the knee belongs to the generator,
// not to the server: the run is marked invalid and the diagnosis says so.
func MarkControl(r *Result, control Result) {
	ck, k := control.BreakingPoints.Knee, r.BreakingPoints.Knee
	if ck == nil || k == nil || len(control.Steps) == 0 {
		return
	}
	last := control.Steps[len(control.Steps)-1].Level
	if ck.Level >= last || ck.Level > k.Level {
		return // the control kept scaling past the probe's knee
	}
	r.Valid = false
	r.Diagnosis = append(r.Diagnosis, fmt.Sprintf(
		"generator-limited: the control probe %q stopped scaling at level %g too (%.0f/s), so the knee at %g is the generator's, not the server's",
		control.Name, ck.Level, ck.Throughput, k.Level))
}
