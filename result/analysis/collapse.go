package analysis

import (
	"fmt"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// collapseDrop is how far goodput must fall below the peak, at a higher
// level, to be called a collapse: more than the knee rule's 5% and the
// noise of a busy machine, little enough to catch the shape early.
const collapseDrop = 0.20

// collapseLine names retrograde throughput: goodput falling by more than
// collapseDrop from the peak at a higher level — more load, less work done,
// the most dangerous shape a ramp can show — with both figures, the level
// and the likely cause read from the failure kinds. plan.ModePhases are a profile,
// not an escalating ramp: a lower rate later in it is no collapse.
func (a *analysis) collapseLine() string {
	steps := a.r.Steps
	if a.r.Mode == plan.ModePhases || a.peak < 0 || steps[a.peak].Goodput <= 0 {
		return ""
	}
	peak, low := steps[a.peak], -1
	for i := a.peak + 1; i < len(steps); i++ {
		if steps[i].Level > peak.Level && (low < 0 || steps[i].Goodput < steps[low].Goodput) {
			low = i
		}
	}
	if low < 0 || steps[low].Goodput >= (1-collapseDrop)*peak.Goodput {
		return ""
	}
	s := steps[low]
	return fmt.Sprintf("more load, less work done: goodput fell from %s/s %s (the peak) to %s/s %s, %s less%s",
		fmtNum(peak.Goodput), a.at(peak), fmtNum(s.Goodput), a.at(s), fmtPct(1-s.Goodput/peak.Goodput),
		collapseCause(steps[a.peak+1:low+1]))
}

// collapseCause reads the likely cause of a collapse from the failure kinds
// of the steps past the peak.
func collapseCause(steps []result.Step) string {
	k := topKind(steps...)
	var attempts int64
	for _, s := range steps {
		attempts += s.Attempts
	}
	if k.n == 0 || attempts == 0 {
		return ""
	}
	share := fmt.Sprintf("; %s on %s of attempts past the peak: ", k.plural(), fmtPct(float64(k.n)/float64(attempts)))
	switch {
	case k.reason == "timeout":
		return share + "the target likely kept serving work the client had already abandoned"
	case k.code.Class() == result.ClassShed || k.code.Class() == result.ClassServerError || k.code.Class() == result.ClassDeadline:
		return share + "the target gave up under the load"
	case k.reason == "refused" || k.reason == "reset":
		return share + "the target stopped taking connections"
	}
	return share + k.meaning()
}

// targetCollapseLine names the closed-loop levels where the generator held
// its load but Little's law over the responses reads far below the level:
// most attempts got no answer in time. That is the target's collapse (the
// reference: 47 in flight at 512 connections), never the generator's
// failure (docs/measurement.md, "Load held, and Little's law"). A gRPC
// stream probe's level is streams, each with as many messages in flight
// as its schedule puts there: Little's law does not read streams.
func (a *analysis) targetCollapseLine() string {
	if !a.r.Mode.ClosedLoop() || a.r.Protocol == plan.ProtocolGRPCStream {
		return ""
	}
	var fell []result.Step
	for _, s := range a.r.Steps {
		if s.Level > 0 && s.Attempts > 0 && a.held(s) && s.InFlight < heldRatio*s.Level {
			fell = append(fell, s)
		}
	}
	if len(fell) == 0 {
		return ""
	}
	s := fell[0]
	line := fmt.Sprintf("%s the generator held its load (load held %s) but only %s requests were in flight by Little's law over the responses",
		a.at(s), fmtPct(s.LoadHeldRatio), fmtNum(s.InFlight))
	if noResp := noResponses(s); noResp > 0 {
		line += fmt.Sprintf(": %s of attempts got no response (%s)", fmtPct(float64(noResp)/float64(s.Attempts)), topReason(s))
	}
	return line + ": the target collapsed, not the generator" + a.also(fell[1:])
}
