package plan

import "github.com/prometheus/common/model"

// Load says how much load a probe sends: exactly one of Concurrency, Rate,
// Phases and Search.
type Load struct {
	Concurrency   []int          `yaml:"concurrency,omitempty"`
	Rate          []float64      `yaml:"rate,omitempty"`
	Phases        []Phase        `yaml:"phases,omitempty"`
	Search        *Search        `yaml:"search,omitempty"`
	StepDuration  model.Duration `yaml:"step_duration"`
	Warmup        model.Duration `yaml:"warmup"`
	MaxInFlight   int            `yaml:"max_in_flight"`
	SettleTimeout model.Duration `yaml:"settle_timeout"`
	// Sessions bounds the sessions an open-loop WebSocket load spreads its
	// messages over; 0: as many as needed (up to max_in_flight).
	Sessions int `yaml:"sessions,omitempty"`
}

// Phase is one part of an open-loop profile; with RampTo the rate moves
// linearly from Rate to RampTo over Duration.
type Phase struct {
	Name     string         `yaml:"name"`
	Duration model.Duration `yaml:"duration"`
	Rate     float64        `yaml:"rate"`
	RampTo   *float64       `yaml:"ramp_to,omitempty"`
}

// Search finds each breaking point to a precision instead of measuring a
// fixed list of levels (docs/search.md): on exactly one axis, Concurrency
// (connections, closed loop) or Rate (requests per second, open loop).
type Search struct {
	Concurrency *SearchRange `yaml:"concurrency,omitempty"`
	Rate        *SearchRange `yaml:"rate,omitempty"`
	// Precision is how close the two ends of a breaking point's bracket
	// must be, as a fraction of its level.
	Precision float64 `yaml:"precision"`
	// MaxSteps bounds the levels one run measures.
	MaxSteps int `yaml:"max_steps"`
	// Line is where the search key stands in the config file, for the
	// errors found once the file is loaded (CheckShard).
	Line int `yaml:"-"`
}

// SearchRange is where a search starts and the level it never goes above.
type SearchRange struct {
	From float64 `yaml:"from"`
	Max  float64 `yaml:"max"`
}

// Range is the search's range on its axis.
func (s *Search) Range() SearchRange {
	if s.Concurrency != nil {
		return *s.Concurrency
	}
	if s.Rate != nil {
		return *s.Rate
	}
	return SearchRange{}
}

// Mode reports which kind of load l holds, as its steps count levels: a
// search reports its axis, ModeConcurrency or ModeRate (Key says it
// searches).
func (l Load) Mode() Mode {
	switch {
	case l.Search != nil && l.Search.Rate != nil:
		return ModeRate
	case len(l.Rate) > 0:
		return ModeRate
	case len(l.Phases) > 0:
		return ModePhases
	default:
		return ModeConcurrency
	}
}

// Key is the config key that holds l (concurrency, rate, phases or
// search), which loadprobe_probe_info names as its mode: a search's
// steps count its axis, which Mode reports.
func (l Load) Key() Mode {
	if l.Search != nil {
		return ModeSearch
	}
	return l.Mode()
}

// Kind says what l is in the words the table and the page use:
// "concurrency ramp", "rate search", "phases profile".
func (l Load) Kind() string {
	switch {
	case l.Search != nil:
		return string(l.Mode()) + " search"
	case l.Mode() == ModePhases:
		return "phases profile"
	}
	return string(l.Mode()) + " ramp"
}

// Peak is the highest load l asks for: connections for a concurrency ramp,
// requests per second otherwise (a phase's ramp_to, a search's max included).
func (l Load) Peak() float64 {
	var peak float64
	if l.Search != nil {
		peak = l.Search.Range().Max
	}
	for _, c := range l.Concurrency {
		peak = max(peak, float64(c))
	}
	for _, r := range l.Rate {
		peak = max(peak, r)
	}
	for _, ph := range l.Phases {
		peak = max(peak, ph.Rate)
		if ph.RampTo != nil {
			peak = max(peak, *ph.RampTo)
		}
	}
	return peak
}
