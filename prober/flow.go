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
	spec     []flowStep
	src      *varSource
	captured int             // values the steps capture, in all
	aborted  context.Context // ends on abort: a think pause ends with it
	cancel   context.CancelFunc
}

type flowStep struct {
	name     string
	t        transport.Transport
	timeout  time.Duration
	captures []flowCapture
	think    *plan.Think
}

// flowCapture is one value a step takes from its response, kept in
// template.Vars.Captured[slot].
type flowCapture struct {
	slot int
	c    plan.Capture
}

// newFlow builds the transport of every step of p's flow: one that can
// capture for a step that captures.
func newFlow(ctx context.Context, p *plan.Probe) (*flow, error) {
	f := &flow{src: newVarSource(p)}
	f.aborted, f.cancel = context.WithCancel(context.Background())
	for _, st := range p.Flow {
		fs := flowStep{name: st.Name, timeout: st.Request.Timeout, think: st.Think}
		for _, c := range st.Captures {
			fs.captures = append(fs.captures, flowCapture{slot: f.captured, c: c})
			f.captured++
		}
		t, _, err := transport.Choose(ctx, p.Name, st.Request, len(fs.captures) > 0, nil)
		if err != nil {
			f.close()
			return nil, err
		}
		fs.t = t
		f.spec = append(f.spec, fs)
		if conn := t.NewConn(template.NewVars(f.captured)); len(fs.captures) > 0 {
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
	u := &flowUser{f: f, vars: template.NewVars(f.captured)}
	for _, st := range f.spec {
		conn := st.t.NewConn(u.vars)
		take, _ := conn.(transport.Capturer) // newFlow checked that a capturing step's can
		if len(st.captures) == 0 {
			take = nil
		}
		u.conns = append(u.conns, conn)
		u.capturers = append(u.capturers, take)
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

func (f *flow) steps() []string {
	names := make([]string, len(f.spec))
	for i, st := range f.spec {
		names[i] = st.name
	}
	return names
}

// flowUser is one virtual user.
type flowUser struct {
	f         *flow
	conns     []transport.Conn
	capturers []transport.Capturer // by step: the step's Conn when it captures, else nil
	vars      *template.Vars
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
		missed := false
		if take := u.capturers[i]; take != nil {
			code, o = take.DoCapture(sent.Add(st.timeout), func(h http.Header, body []byte) bool {
				missed = !u.capture(st, h, body)
				return !missed
			})
		} else {
			code, o = u.conns[i].Do(sent.Add(st.timeout))
		}
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
	for _, fc := range st.captures {
		var v string
		var ok bool
		switch {
		case fc.c.Header != "":
			v = h.Get(fc.c.Header)
			ok = v != ""
		case fc.c.Pattern != nil:
			if m := fc.c.Pattern.FindSubmatch(body); m != nil {
				v, ok = string(m[1]), true
			}
		default:
			v, ok = jsonPath(body, fc.c.JSON)
		}
		if !ok {
			return false
		}
		u.vars.Captured[fc.slot] = v
	}
	return true
}

func (u *flowUser) close() {
	for _, conn := range u.conns {
		conn.Close()
	}
}
