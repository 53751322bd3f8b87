package analysis

import (
	"fmt"
	"strings"

	"github.com/loadprobe/loadprobe/result"
)

// generatorLine names the generator-limited steps and why: the process's
// CPU at or above the budget, or other runs' load overlapping the step
// (docs/measurement.md, "The generator watches itself").
func (a *analysis) generatorLine() string {
	var why []string
	for _, s := range a.r.Steps {
		if !a.generatorLimited(s) {
			continue
		}
		var causes []string
		if a.cpuBudget > 0 && s.GeneratorCPURatio >= a.cpuBudget {
			causes = append(causes, fmt.Sprintf("generator CPU %s of what it may use, budget %s", fmtPct(s.GeneratorCPURatio), fmtPct(a.cpuBudget)))
		}
		if n := s.Errors[result.Generator.String()]; n > 0 {
			causes = append(causes, fmt.Sprintf("the generator ran out of file descriptors (limit %d): %d attempts not made", s.FileLimit, n))
		}
		if scriptErred(s) {
			causes = append(causes, fmt.Sprintf("the request's script erred in %d of %d attempts, more than %s: %s",
				s.Errors[result.Script.String()], s.Attempts, fmtPct(scriptErrorShare), s.ScriptError))
		}
		if n := s.OverlappingRuns; n == 1 {
			causes = append(causes, "1 other run's load overlapped it")
		} else if n > 1 {
			causes = append(causes, fmt.Sprintf("%d other runs' load overlapped it", n))
		}
		why = append(why, a.levelText(s)+" ("+strings.Join(causes, "; ")+")")
	}
	if len(why) == 0 {
		return ""
	}
	return "generator-limited at " + strings.Join(why, ", ") +
		": the figures there may be the generator's, not the target's; the run is not valid"
}
