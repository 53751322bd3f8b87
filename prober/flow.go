package prober

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// A flow probe (docs/templates.md, "Flows") is a workload whose users are
// virtual users: each runs an iteration, every step in order on the
// step's own connection, with the values its steps capture, and the
// engine counts iterations where it counts attempts. Each step's attempt
// goes to the engine's stepObserver, which records it in the level's
// window beside the iteration.

// flow is the workload of a flow probe.
type flow struct {
	spec    []flowStep
	src     *varSource
	names   []string        // the values a virtual user carries (plan.Probe.Vars)
	aborted context.Context // ends on abort: a think pause ends with it
	cancel  context.CancelFunc
	errs    scriptErrors
}

type flowStep struct {
	name    string
	req     *plan.Request
	t       transport.Transport
	timeout time.Duration
	// captures take values from the response into Vars.Captured, each at
	// its Slot.
	captures []plan.Capture
	think    *plan.Think
}

// newFlow builds the transport of every step of p's flow: one that can
// hand its responses to the engine for a step that reads them.
func newFlow(ctx context.Context, p *plan.Probe) (*flow, error) {
	f := &flow{src: newVarSource(p), names: p.Vars}
	f.aborted, f.cancel = context.WithCancel(context.Background())
	for _, st := range p.Flow {
		fs := flowStep{name: st.Name, req: st.Request, timeout: st.Request.Timeout, think: st.Think, captures: st.Captures}
		t, _, err := transport.Choose(ctx, p.Name, st.Request, len(fs.captures) > 0, nil)
		if err != nil {
			f.close()
			return nil, err
		}
		fs.t = t
		f.spec = append(f.spec, fs)
		if conn := t.NewConn(template.NewVars(len(f.names))); len(fs.captures) > 0 || st.Request.Script != nil {
			_, ok := conn.(transport.Capturer)
			conn.Close()
			if !ok {
				f.close()
				return nil, fmt.Errorf("flow step %s: its client cannot read the response it captures from", st.Name)
			}
		}
	}
	return f, nil
}

// newUser returns one virtual user: a connection for each step, and the
// values its iterations carry.
func (f *flow) newUser() user {
	u := &flowUser{f: f, vars: template.NewVars(len(f.names))}
	for i := range f.spec {
		st := &f.spec[i]
		var capture func(http.Header, []byte) bool
		if len(st.captures) > 0 {
			capture = func(h http.Header, body []byte) bool { return u.capture(st, h, body) }
		}
		u.steps = append(u.steps, newExchange(st.req, st.t.NewConn(u.vars), u.vars, f.names, capture, &f.errs))
	}
	return u
}

func (f *flow) abort() {
	f.cancel()
	for _, st := range f.spec {
		st.t.Abort()
	}
}

func (f *flow) close() {
	for _, st := range f.spec {
		st.t.Close()
	}
}

func (f *flow) scriptError() string { return f.errs.take() }

func (f *flow) steps() []string {
	names := make([]string, len(f.spec))
	for i, st := range f.spec {
		names[i] = st.name
	}
	return names
}

// flowUser is one virtual user.
type flowUser struct {
	f     *flow
	steps []*exchange // by step, each on its own connection
	vars  *template.Vars
}

// do runs one iteration: each step in turn, until one fails. It returns
// the failed step's code and outcome, or the last step's. A capture that
// finds nothing fails its step as an http_error: the response came, but
// not one the flow can go on with. deadline is not used: each step has its
// own timeout.
func (u *flowUser) do(_ time.Time, steps stepObserver) (code result.Code, o result.Outcome, think time.Duration) {
	u.f.src.row(u.vars)
	for i := range u.f.spec {
		st := &u.f.spec[i]
		u.f.src.index(u.vars)
		sent := time.Now()
		var missed bool
		code, o, missed = u.steps[i].do(sent.Add(st.timeout))
		steps(i, o, code, sent, time.Now(), missed)
		if o != result.Success {
			return code, o, think
		}
		d, ok := u.think(st.think)
		think += d
		if !ok {
			return code, o, think
		}
	}
	return code, o, think
}

// think pauses as the step says, and returns how long; false when the run
// was aborted meanwhile.
func (u *flowUser) think(t *plan.Think) (time.Duration, bool) {
	if t == nil || t.Max <= 0 {
		return 0, true
	}
	d := t.Min
	if spread := int64(t.Max - t.Min); spread > 0 {
		d += time.Duration(u.vars.Rand.Int64N(spread + 1))
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return d, true
	case <-u.f.aborted.Done():
		return d, false
	}
}

// capture takes every value st captures from a response; false when one
// is not there.
func (u *flowUser) capture(st *flowStep, h http.Header, body []byte) bool {
	for _, c := range st.captures {
		var v string
		var ok bool
		switch {
		case c.Header != "":
			v = h.Get(c.Header)
			ok = v != ""
		case c.Pattern != nil:
			if m := c.Pattern.FindSubmatch(body); m != nil {
				v, ok = string(m[1]), true
			}
		default:
			v, ok = jsonPath(body, c.JSON)
		}
		if !ok {
			return false
		}
		u.vars.Captured[c.Slot] = v
	}
	return true
}

func (u *flowUser) close() {
	for _, x := range u.steps {
		x.conn.Close()
	}
}
