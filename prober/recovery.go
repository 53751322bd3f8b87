package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// measureRecovery applies the first level's load again, in windows, after
// a run whose last level's load ended at loadEnd, and returns the time
// from loadEnd to the start of the first of analysis.RecoveryWindows
// windows in a row that show the target recovered; recovered is false
// when no such windows started within settle_timeout of loadEnd, or the
// run was stopped.
func (e *engine) measureRecovery(first result.Step, loadEnd time.Time) (took time.Duration, recovered bool) {
	st := share(e.opts.Shard, e.probe.Load.Mode(), []stage{{level: first.Level, rampTo: first.Level,
		duration: analysis.RecoveryWindow, why: "recovery", recovery: true}})[0]
	bound := time.Duration(e.probe.Load.SettleTimeout)
	good, since := 0, time.Time{} // the good windows in a row, and the first one's start
	for !e.canceled() && (good > 0 || time.Since(loadEnd) < bound) {
		w := e.runStage(e.plan.most()-1, st)
		if !analysis.RecoveredIn(w, first) {
			good = 0
			continue
		}
		if good == 0 {
			since = w.Started
		}
		if good++; good == analysis.RecoveryWindows {
			took = since.Sub(loadEnd)
			return took, took < bound
		}
	}
	return 0, false
}

// recover measures how the target of a completed run that measured levels
// past its capacity's recovers from them; the zero Recovery (not measured)
// for any other run.
func (e *engine) recover(r *result.Result) analysis.Recovery {
	if r.Ended != result.ResultCompleted || e.canceled() || len(r.Steps) == 0 {
		return analysis.Recovery{}
	}
	past := *r
	analysis.Analyze(&past, e.probe.Rules)
	if past.Overload == nil {
		return analysis.Recovery{}
	}
	last := r.Steps[len(r.Steps)-1]
	loadEnd := last.Started.Add(time.Duration(e.probe.Load.Warmup) + time.Duration(last.DurationSeconds*float64(time.Second)))
	took, recovered := e.measureRecovery(r.Steps[0], loadEnd)
	return analysis.Recovery{Measured: !e.canceled(), Recovered: recovered, Seconds: took.Seconds(),
		Within: time.Duration(e.probe.Load.SettleTimeout), Level: r.Steps[0]}
}
