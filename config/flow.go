package config

import (
	"maps"
	"regexp"
	"slices"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/config/template"
)

// FlowStep is one named request of a flow (docs/templates.md,
// "Flows"): the steps of a flow run in order, once per iteration, each
// with the values the steps before it captured.
type FlowStep struct {
	Name    string             `yaml:"name"`
	Request Request            `yaml:"request"`
	Capture map[string]Capture `yaml:"capture,omitempty"`
	Think   *Think             `yaml:"think,omitempty"`
}

// Capture takes one value from a step's response: a dotted path into its
// JSON body, a header, or the first group of a regular expression over the
// body. Exactly one is set.
type Capture struct {
	JSON   string `yaml:"json,omitempty"`
	Header string `yaml:"header,omitempty"`
	Regex  string `yaml:"regex,omitempty"`
}

// Think is the pause after a step: a fixed duration (think: 100ms) or one
// drawn uniformly from min to max (think: {min: 50ms, max: 150ms}).
type Think struct {
	Min model.Duration `yaml:"min"`
	Max model.Duration `yaml:"max"`
}

// fromScalar reads the short form, think: 100ms.
func (t *Think) fromScalar(n *yaml.Node) error {
	var d model.Duration
	if err := n.Decode(&d); err != nil {
		return err
	}
	t.Min, t.Max = d, d
	return nil
}

// maxFlowSteps bounds a flow: each step holds a connection per virtual user.
const maxFlowSteps = 32

var defaultFlowStep = FlowStep{Request: DefaultRequest}

// flow checks a probe's flow and compiles its templates: each step may use
// the data's columns and the values captured (or set by scripts) by the
// steps before it. It returns the names of those values, in the order of
// their slots (plan.Probe.Vars).
func (v *validator) flow(c *Config, pr *Probe, p keyPath, dir string, columns []string) (captured []string) {
	fp := p.to("flow")
	if _, set := v.lines[p.to("request").String()]; set {
		v.errorf(fp, "flow and request are exclusive: a flow's steps carry their requests")
	}
	if len(pr.Flow) == 0 {
		v.errorf(fp, "at least one step is required")
		return nil
	}
	if len(pr.Flow) > maxFlowSteps {
		v.errorf(fp, "%d steps, more than %d", len(pr.Flow), maxFlowSteps)
		return nil
	}
	names := map[string]int{}
	for i := range pr.Flow {
		st := &pr.Flow[i]
		sp := fp.to(i)
		v.uniqueName(sp.to("name"), "step", st.Name, names, "flow", i)
		parts := v.request(c, &st.Request, sp.to("request"), dir, template.Scope{Columns: columns, Captured: captured})
		if st.Request.GRPC != nil {
			v.errorf(sp.to("request", "grpc"), "a flow's steps are HTTP requests: a gRPC call is a probe of its own")
		} else {
			v.grpc(&st.Request, parts, sp.to("request"), dir, template.Scope{}) // a grpc:// URL without its section
		}
		for _, name := range st.CaptureNames() {
			cp := sp.to("capture", name)
			if !validName(name) {
				v.errorf(cp, "%q is not a valid name: use letters, digits, _ and -", name)
			}
			if re := v.capture(st.Capture[name], cp); re != nil {
				parts.patterns[name] = re
			}
			parts.slots[name] = len(captured)
			captured = append(captured, name)
		}
		if parts.script != nil {
			for _, name := range parts.script.Vars() {
				if !slices.Contains(captured, name) {
					captured = append(captured, name)
				}
			}
		}
		if t := st.Think; t != nil && (t.Min < 0 || t.Max < t.Min) {
			v.errorf(sp.to("think"), "min must be at least 0 and max at least min (got %s to %s)", t.Min, t.Max)
		}
	}
	return captured
}

// capture checks c at p, and returns its regex compiled; nil for a JSON
// path or a header.
func (v *validator) capture(c Capture, p keyPath) *regexp.Regexp {
	set := 0
	for _, s := range []string{c.JSON, c.Header, c.Regex} {
		if s != "" {
			set++
		}
	}
	if set != 1 {
		v.errorf(p, "exactly one of json, header and regex is required")
		return nil
	}
	if c.Regex == "" {
		return nil
	}
	re, err := regexp.Compile(c.Regex)
	switch {
	case err != nil:
		v.errorf(p.to("regex"), "%v", err)
	case re.NumSubexp() < 1:
		v.errorf(p.to("regex"), "%q has no group: the first group is the value captured", c.Regex)
	default:
		return re
	}
	return nil
}

// CaptureNames lists the names the step captures, in the order their values
// are kept: a flow's captured values are each step's, in step order.
func (st *FlowStep) CaptureNames() []string {
	return slices.Sorted(maps.Keys(st.Capture))
}
