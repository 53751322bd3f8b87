package plan

import (
	"regexp"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
)

// FlowStep is one named request of a flow, compiled (docs/templates.md,
// "Flows"): the steps run in order, once per iteration, each with the
// values the steps before it captured.
type FlowStep struct {
	Name    string
	Request *Request
	// Captures take values from the step's response, in the order their
	// values are kept: a flow's captured values are each step's, in step
	// order (template.Vars.Captured).
	Captures []Capture
	// Think is the pause after the step; nil for none.
	Think *Think
}

// Capture takes one value from a step's response: a dotted path into its
// JSON body, a header, or the first group of a regular expression over the
// body. Exactly one of JSON, Header and Pattern is set.
type Capture struct {
	Name string
	// Slot is where the value is kept: its index in Probe.Vars.
	Slot    int
	JSON    string
	Header  string
	Pattern *regexp.Regexp
}

// Think is the pause after a step: drawn uniformly from Min to Max.
type Think struct{ Min, Max time.Duration }

// Rows are a probe's data rows (docs/templates.md, "Data"), read once:
// each iteration takes one, in order or at random.
type Rows struct {
	Columns []string
	Table   *template.Table
	Random  bool
}
