package plan

import "time"

// Step is one step of a fixed load: a level of a ramp, or a phase of a
// profile.
type Step struct {
	Level float64 // connections, or requests per second (a phase's rate at its start)
	// RampTo is a phase's rate at its end; Level when the step is flat.
	RampTo   float64
	Name     string // a phase's; empty for a level
	Duration time.Duration
}

// Steps lists the steps of l in the order they run; nil for a search,
// whose steps its runs choose.
func (l Load) Steps() []Step {
	step := time.Duration(l.StepDuration)
	var steps []Step
	switch {
	case l.Search != nil:
	case len(l.Concurrency) > 0:
		for _, c := range l.Concurrency {
			steps = append(steps, Step{Level: float64(c), RampTo: float64(c), Duration: step})
		}
	case len(l.Rate) > 0:
		for _, r := range l.Rate {
			steps = append(steps, Step{Level: r, RampTo: r, Duration: step})
		}
	default:
		for _, ph := range l.Phases {
			to := ph.Rate
			if ph.RampTo != nil {
				to = *ph.RampTo
			}
			steps = append(steps, Step{Level: ph.Rate, RampTo: to, Name: ph.Name, Duration: time.Duration(ph.Duration)})
		}
	}
	return steps
}
