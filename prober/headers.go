package prober

import (
	"net/http"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
)

// fixedHeaders sets in fixed the headers of h that write a fixed text, and
// returns those that vary per attempt.
func fixedHeaders(h plan.Header, fixed http.Header) (varying []plan.Field) {
	for _, f := range h.Fields {
		if v, ok := f.Value.Literal(); ok {
			fixed.Set(f.Name, v)
		} else {
			varying = append(varying, f)
		}
	}
	return varying
}

// render sets the headers that vary with v's values.
func render(h http.Header, varying []plan.Field, v *template.Vars) {
	for _, f := range varying {
		h.Set(f.Name, string(f.Value.Append(nil, v)))
	}
}
