package script

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"golang.org/x/net/http/httpguts"

	"github.com/loadprobe/loadprobe/plan"
)

// StepBudget bounds the Starlark steps of one call: a few milliseconds of
// the interpreter (docs/scripts.md, "Bounds").
const StepBudget = 1_000_000

// state is what a thread's builtins read: the program and the call under
// way. A thread is reused from call to call (threads), so is its state.
type state struct {
	program *Program
	call    *plan.ScriptCall
	tick    uint64 // the watchdog's tick when the call began
	allocs  uint64 // and the bytes the process had allocated then
}

func stateOf(t *starlark.Thread) *state { return t.Local("state").(*state) }

var threads = sync.Pool{New: func() any {
	t := &starlark.Thread{Name: "script"}
	t.SetLocal("state", &state{})
	t.SetMaxExecutionSteps(StepBudget)
	return t
}}

// slots holds a call back while every core already runs one: a script
// neither waits on I/O nor sleeps, so more calls at once would only hold
// more memory (docs/scripts.md, "Bounds").
var slots = make(chan struct{}, runtime.GOMAXPROCS(0))

// run calls fn with args on a thread of its own, within the bounds.
func (p *Program) run(call *plan.ScriptCall, fn *starlark.Function, args ...starlark.Value) error {
	slots <- struct{}{}
	defer func() { <-slots }()
	t := threads.Get().(*starlark.Thread)
	defer threads.Put(t)
	st := stateOf(t)
	st.program, st.call = p, call
	t.Steps = 0
	t.Uncancel()
	watch.enter(t, st)
	_, err := starlark.Call(t, fn, args, nil)
	if bound := watch.leave(t, st); err == nil {
		err = bound
	}
	st.program, st.call = nil, nil
	return err
}

// BeforeRequest calls before_request(req, vars) and writes what it set
// back into m and call's values.
func (p *Program) BeforeRequest(call *plan.ScriptCall, m *plan.Message) error {
	req, err := newRequest(m)
	if err != nil {
		return err
	}
	vars := varsDict(call)
	if err := p.run(call, p.before, req, vars); err != nil {
		var f *failure
		if errors.As(err, &f) {
			return fmt.Errorf("before_request failed: %s", f.reason)
		}
		return failedAt(err)
	}
	if err := req.write(m); err != nil {
		return err
	}
	return setVars(call, vars)
}

// AfterResponse calls after_response(res, vars); failed is the reason it
// gave to fail().
func (p *Program) AfterResponse(call *plan.ScriptCall, r plan.Reply) (failed string, err error) {
	headers := starlark.NewDict(len(r.Header))
	for name, values := range r.Header {
		if len(values) > 0 {
			headers.SetKey(starlark.String(name), starlark.String(values[0]))
		}
	}
	res := starlarkstruct.FromStringDict(starlark.String("response"), starlark.StringDict{
		"status":  starlark.MakeInt(r.Status),
		"headers": headers,
		"body":    starlark.String(r.Body),
	})
	vars := varsDict(call)
	if err := p.run(call, p.after, res, vars); err != nil {
		var f *failure
		if !errors.As(err, &f) {
			return "", failedAt(err)
		}
		failed = f.reason
	}
	return failed, setVars(call, vars)
}

// varsDict is the user's variables as a dict, leaving out those never set.
func varsDict(call *plan.ScriptCall) *starlark.Dict {
	d := starlark.NewDict(len(call.Names))
	for i, name := range call.Names {
		if v := call.Values[i]; v != "" {
			d.SetKey(starlark.String(name), starlark.String(v))
		}
	}
	return d
}

// setVars writes d back into call's values. Every key must be a name the
// probe's templates and scripts know, and every value a string.
func setVars(call *plan.ScriptCall, d *starlark.Dict) error {
	for i := range call.Values {
		call.Values[i] = ""
	}
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return fmt.Errorf("vars: key %s is not a string", kv[0])
		}
		v, ok := starlark.AsString(kv[1])
		if !ok {
			return fmt.Errorf("vars[%q]: %s is not a string", k, kv[1].Type())
		}
		i := slices.Index(call.Names, k)
		if i < 0 {
			return fmt.Errorf("vars[%q]: not a name the probe knows (a capture, or a key a script assigns literally)", k)
		}
		call.Values[i] = v
	}
	return nil
}

// request is before_request's req: every field assignable.
type request struct {
	method, path, body starlark.String
	query, headers     *starlark.Dict
}

var requestFields = []string{"body", "headers", "method", "path", "query"}

func newRequest(m *plan.Message) (*request, error) {
	path, rawQuery, _ := strings.Cut(m.Target, "?")
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("the request's query: %v", err)
	}
	r := &request{method: starlark.String(m.Method), path: starlark.String(path), body: starlark.String(m.Body),
		query: starlark.NewDict(len(values)), headers: starlark.NewDict(len(m.Header))}
	for k, vs := range values {
		r.query.SetKey(starlark.String(k), starlark.String(vs[0]))
	}
	for _, f := range m.Header {
		r.headers.SetKey(starlark.String(f.Name), starlark.String(f.Value))
	}
	return r, nil
}

func (r *request) String() string        { return fmt.Sprintf("request(%s %s)", r.method, r.path) }
func (r *request) Type() string          { return "request" }
func (r *request) Freeze()               {}
func (r *request) Truth() starlark.Bool  { return true }
func (r *request) Hash() (uint32, error) { return 0, errors.New("unhashable: request") }
func (r *request) AttrNames() []string   { return requestFields }

func (r *request) Attr(name string) (starlark.Value, error) {
	switch name {
	case "method":
		return r.method, nil
	case "path":
		return r.path, nil
	case "body":
		return r.body, nil
	case "query":
		return r.query, nil
	case "headers":
		return r.headers, nil
	}
	return nil, nil
}

func (r *request) SetField(name string, v starlark.Value) error {
	if name == "query" || name == "headers" {
		d, ok := v.(*starlark.Dict)
		if !ok {
			return fmt.Errorf("req.%s: a dict, not %s", name, v.Type())
		}
		if name == "query" {
			r.query = d
		} else {
			r.headers = d
		}
		return nil
	}
	s, ok := v.(starlark.String)
	if !ok {
		return fmt.Errorf("req.%s: a string, not %s", name, v.Type())
	}
	switch name {
	case "method":
		r.method = s
	case "path":
		r.path = s
	case "body":
		r.body = s
	default:
		return starlark.NoSuchAttrError(fmt.Sprintf("request has no field %s", name))
	}
	return nil
}

// write checks what the script set and writes it into m. The path must be
// a path: a script cannot send to another host than its probe's, whose
// connections are to the URL the allowlist admitted.
func (r *request) write(m *plan.Message) error {
	method, path := string(r.method), string(r.path)
	if !httpguts.ValidHeaderFieldName(method) {
		return fmt.Errorf("req.method %q is not an HTTP method", method)
	}
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		return fmt.Errorf("req.path %q is not a path: a script cannot send to another host than its probe's URL names", clip(path))
	}
	m.Method, m.Target = method, path
	if r.query.Len() > 0 {
		q := url.Values{}
		for _, kv := range r.query.Items() {
			k, kok := starlark.AsString(kv[0])
			v, vok := starlark.AsString(kv[1])
			if !kok || !vok {
				return fmt.Errorf("req.query: %s: keys and values are strings", kv[0])
			}
			q.Set(k, v)
		}
		m.Target += "?" + q.Encode()
	}
	m.Header = m.Header[:0]
	for _, kv := range r.headers.Items() {
		k, kok := starlark.AsString(kv[0])
		v, vok := starlark.AsString(kv[1])
		switch {
		case !kok || !vok:
			return fmt.Errorf("req.headers: %s: names and values are strings", kv[0])
		case !httpguts.ValidHeaderFieldName(k):
			return fmt.Errorf("req.headers: %q is not a header name", clip(k))
		case !httpguts.ValidHeaderFieldValue(v):
			return fmt.Errorf("req.headers[%q] holds a control character", k)
		}
		m.Header = append(m.Header, plan.HeaderField{Name: http.CanonicalHeaderKey(k), Value: v})
	}
	m.Body = append(m.Body[:0], r.body...)
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
