package config

import (
	"maps"
	"math"
	"strconv"
)

// Compile checks one probe as Parse checks each probe of a file, and
// returns it compiled as Parse returns it: its body in Payload, its
// templates, its data rows and capture patterns. It is how a probe built
// in Go (from DefaultProbe, with a name, a URL and a load) is checked
// before it sends anything; a probe Parse returned compiles again to
// itself, without reading its files again.
//
// What belongs to a config file as a whole is not judged: allowed_targets,
// the caps max_concurrency and max_rate, a control and whether a run fits
// the schedule's interval. Relative paths are the working directory's.
// The error names each key at fault, e.g.
//
//	probe "api": request.headers.X-A: the value of X-A holds a control character
func Compile(p Probe) (Probe, error) {
	p = p.clone()
	uncapped := &Config{MaxConcurrency: math.MaxInt, MaxRate: math.Inf(1)}
	v := &validator{lines: map[string]int{}}
	v.probe(uncapped, &p, nil, "")
	for i := range v.issues {
		v.issues[i].line = 0 // no file: the key path says where
	}
	if err := v.err("probe " + strconv.Quote(p.Name)); err != nil {
		return Probe{}, err
	}
	return p, nil
}

// clone copies what compiling p writes to, so that the caller's probe,
// which other goroutines may read (a config in force), is left as it is.
func (p Probe) clone() Probe {
	p.Request = p.Request.clone()
	if p.Data != nil {
		d := *p.Data
		p.Data = &d
	}
	if p.Flow != nil {
		flow := make([]FlowStep, len(p.Flow))
		for i, st := range p.Flow {
			st.Request = st.Request.clone()
			st.Capture = maps.Clone(st.Capture)
			flow[i] = st
		}
		p.Flow = flow
	}
	return p
}

// clone copies the client settings that validation writes to: it sets
// authorization's default type, and moves bearer_token into it; and the
// grpc section, whose descriptors and templates it sets.
func (r Request) clone() Request {
	if a := r.HTTPClientConfig.Authorization; a != nil {
		c := *a
		r.HTTPClientConfig.Authorization = &c
	}
	if g := r.GRPC; g != nil {
		c := *g
		r.GRPC = &c
	}
	return r
}
