package plan

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
)

// Script is a request's compiled script (docs/scripts.md): before_request
// rewrites the message an attempt sends, after_response reads its reply.
// It is shared by every user of a run and safe for concurrent use; each
// call is bounded in steps, time and memory, and a call that errs or runs
// out of its bounds returns an error.
type Script interface {
	// Before and After report which of the two functions it defines.
	Before() bool
	After() bool
	// BeforeRequest calls before_request on m, with the user's variables
	// in call.
	BeforeRequest(call *ScriptCall, m *Message) error
	// AfterResponse calls after_response on r; failed is the reason the
	// script gave to fail(), "" when it did not.
	AfterResponse(call *ScriptCall, r Reply) (failed string, err error)
}

// ScriptCall is what one call of a script reads beside its argument: the
// attempt's intended time, the user's random source, and the user's
// variables, Values[i] named Names[i] (a Probe's Vars, with
// template.Vars.Captured), which the call may change.
type ScriptCall struct {
	At     time.Time
	Rand   *rand.Rand
	Names  []string
	Values []string
}

// Message is an HTTP request as an attempt sends it, for a script to
// rewrite: the method, the request target (path and query), the header
// fields in order (Host among them when the config sets one), the body.
type Message struct {
	Method string
	Target string
	Header []HeaderField
	Body   []byte
}

// HeaderField is one header field of a Message.
type HeaderField struct{ Name, Value string }

// Reply is what a script reads of a response: its status, its header as
// net/http has it, its body up to the transport's bound.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// Render writes r's request with v's values into m, reusing m's buffers.
func (r *Request) Render(v *template.Vars, m *Message) {
	m.Method = r.Method
	m.Target = string(r.Target.Append(nil, v))
	m.Header = m.Header[:0]
	if r.Header.Host != nil {
		m.Header = append(m.Header, HeaderField{"Host", string(r.Header.Host.Append(nil, v))})
	}
	for _, f := range r.Header.Fields {
		m.Header = append(m.Header, HeaderField{f.Name, string(f.Value.Append(nil, v))})
	}
	m.Body = r.Body.Append(m.Body[:0], v)
}

// Size is the bytes m's target, header fields (with their names) and body
// take, as a request's size bound counts them (MaxRequestBytes).
func (m *Message) Size() int64 {
	n := int64(len(m.Target) + len(m.Body))
	for _, f := range m.Header {
		n += int64(len(f.Name) + 4 + len(f.Value))
	}
	return n
}
