package analysis

import (
	"fmt"
	"maps"

	"github.com/loadprobe/loadprobe/result"
)

// asStep is fs with the fields the failure vocabulary reads.
func asStep(fs result.FlowFigures) result.Step {
	return result.Step{Attempts: fs.Attempts, Responses: fs.Responses, HTTPErrors: fs.HTTPErrors, Errors: fs.Errors}
}

// flowLines are a flow's own findings: the step that failed first, and the
// step that limits the flow.
func (a *analysis) flowLines() []string {
	if len(a.r.Steps) == 0 || len(a.r.Steps[0].Flow) == 0 {
		return nil
	}
	return []string{a.firstFailingStep(), a.limitingStep()}
}

// firstFailingStep names the first step, in the order the flow runs them,
// with a failed attempt at the first level that had one.
func (a *analysis) firstFailingStep() string {
	for _, s := range a.r.Steps {
		for _, fs := range s.Flow {
			if fs.ErrorRatio > 0 {
				return fmt.Sprintf("first failure %s: step %q, %s", a.at(s), fs.Name, describeStepFailures(fs))
			}
		}
	}
	return ""
}

// limitingStep names the step whose latency grows most past the knee (from
// the first level when the ramp has no knee): the one the flow waits on
// as the load grows.
func (a *analysis) limitingStep() string {
	steps := a.r.Steps
	from := max(a.knee, 0)
	last := len(steps) - 1
	if last <= from {
		return ""
	}
	best, growth := -1, 0.0
	for i := range steps[from].Flow {
		if i >= len(steps[last].Flow) {
			break
		}
		q0, q1 := a.quantile.Of(steps[from].Flow[i].Latency), a.quantile.Of(steps[last].Flow[i].Latency)
		if q0 > 0 && q1 > 0 && q1-q0 > growth {
			best, growth = i, q1-q0
		}
	}
	if best < 0 {
		return ""
	}
	name := steps[last].Flow[best].Name
	return fmt.Sprintf("step %q limits the flow: its %s grows most past %s, from %s to %s %s",
		name, a.quantile.Label, a.levelText(steps[from]),
		fmtSeconds(a.quantile.Of(steps[from].Flow[best].Latency)), fmtSeconds(a.quantile.Of(steps[last].Flow[best].Latency)), a.at(steps[last]))
}

// describeStepFailures is describeFailures for a flow's step, whose
// http_errors may be responses its captures found nothing in.
func describeStepFailures(fs result.FlowFigures) string {
	var misses int64
	rest := asStep(fs)
	rest.HTTPErrors = maps.Clone(fs.HTTPErrors)
	for code, n := range fs.CaptureMisses {
		misses += n
		rest.HTTPErrors[code] -= n
	}
	if misses == 0 {
		return describeFailures(rest)
	}
	line := fmt.Sprintf("its capture found nothing in %s of attempts", fmtPct(float64(misses)/float64(fs.Attempts)))
	if rest.Failed() > 0 {
		line += ", " + describeFailures(rest)
	}
	return line
}
