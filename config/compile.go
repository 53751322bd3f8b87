package config

import (
	"crypto/sha256"
	"math"
	"regexp"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/loadprobe/loadprobe/config/script"
	"github.com/loadprobe/loadprobe/plan"
)

// Compile checks one probe as Parse checks each probe of a file, and
// returns it compiled, as Parse compiles each: what the engine runs. It is
// how a probe built in Go (from DefaultProbe, with a name, a URL and a
// load) is checked before it sends anything.
//
// What belongs to a config file as a whole is not judged: allowed_targets,
// the caps max_concurrency and max_rate, a control and whether a run fits
// the schedule's interval. Relative paths are the working directory's.
// The error names each key at fault, e.g.
//
//	probe "api": request.headers.X-A: the value of X-A holds a control character
func Compile(p Probe) (*plan.Probe, error) {
	uncapped := &Config{MaxConcurrency: math.MaxInt, MaxRate: math.Inf(1)}
	v := newValidator(nil)
	_, compiled := v.probe(uncapped, &p, nil, "")
	for i := range v.issues {
		v.issues[i].line = 0 // no file: the key path says where
	}
	if err := v.err("probe " + strconv.Quote(p.Name)); err != nil {
		return nil, err
	}
	return compiled, nil
}

// requestParts are what validation read and compiled of one request, which
// compile builds its plan from.
type requestParts struct {
	payload   []byte
	templates *requestTemplates // nil when nothing varies
	grpc      *grpcTemplates    // nil when nothing varies
	set       *protoregistry.Files
	// patterns are the regexes of a flow step's captures, by name.
	patterns map[string]*regexp.Regexp
	// slots are where a flow step's captures keep their values, by name:
	// their indexes in plan.Probe.Vars.
	slots  map[string]int
	script *script.Program // nil without one
	// sum is the SHA-256 of the files read for the request (a body_file,
	// a descriptor set), which Same compares.
	sum [sha256.Size]byte
}

// compile builds the plan of p, which validation found valid, from what
// it read: the files it names (dataSum is its data file's SHA-256), and
// the credentials its client settings read (client.go).
func (v *validator) compile(p *Probe, pp keyPath, rows *plan.Rows, dataSum [sha256.Size]byte, vars []string) *plan.Probe {
	problems := len(v.issues)
	cp := plan.Probe{
		Name: p.Name, Load: p.Load, Rules: p.Rules, Abort: p.Abort, Guard: p.Guard, Telemetry: p.Telemetry,
		Control: p.Control, Expect: p.Expect, Schedule: p.Schedule, Rows: rows, Vars: vars,
	}
	print := sha256.New()
	if err := yaml.NewEncoder(print).Encode(p); err != nil {
		v.errorf(pp, "%v", err)
		return nil
	}
	request := func(r *Request, rp keyPath) *plan.Request {
		parts := v.parts[r]
		print.Write(parts.sum[:])
		return v.compileRequest(r, parts, rp)
	}
	if p.Flow == nil {
		cp.Request = request(&p.Request, pp.to("request"))
	}
	if c := p.Compare; c != nil {
		cp.Compare = &c.Compare
		cp.Candidate = request(&c.request, pp.to("compare", "candidate"))
	}
	for i := range p.Flow {
		st := &p.Flow[i]
		step := plan.FlowStep{Name: st.Name, Request: request(&st.Request, pp.to("flow", i, "request"))}
		for _, name := range st.CaptureNames() {
			c := st.Capture[name]
			parts := v.parts[&st.Request]
			step.Captures = append(step.Captures, plan.Capture{Name: name, Slot: parts.slots[name], JSON: c.JSON, Header: c.Header, Pattern: parts.patterns[name]})
		}
		if t := st.Think; t != nil {
			step.Think = &plan.Think{Min: time.Duration(t.Min), Max: time.Duration(t.Max)}
		}
		cp.Flow = append(cp.Flow, step)
	}
	if len(cp.Flow) > 0 {
		// The first step's host is the one the scheduler keeps exclusive.
		cp.Request = cp.Flow[0].Request
	}
	print.Write(dataSum[:])
	if len(v.issues) > problems {
		return nil
	}
	return plan.New(cp, [32]byte(print.Sum(nil)))
}
