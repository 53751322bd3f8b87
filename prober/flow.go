package prober

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// A flow probe (docs/templates.md, "Flows") is run by the
// same engine as a single request: its connector hands each virtual user a
// flowConn whose Do runs one iteration, every step in order on the step's
// own connection, and returns how the iteration ended. The engine then
// counts iterations where it counts attempts; the flowConn also records
// each step's attempts, which become the level's Flow figures.

// flowClient is the connector of a flow probe.
type flowClient struct {
	steps   []flowStep
	src     *varSource
	aborted context.Context // ends on Abort: a think pause ends with it
	abort   context.CancelFunc

	mu    sync.Mutex
	conns []*flowConn // every virtual user's, for the figures of a level
	// measureFrom and window are the current level's measured window
	// (engine.flowStart); a step attempt counts when it started inside.
	measureFrom time.Time
	window      time.Duration
}

type flowStep struct {
	name     string
	live     live.Sink // the step's live series (flowLive); live.Nop until a run gives them
	client   httpClient
	timeout  time.Duration
	captures []flowCapture
	think    *plan.Think
}

// capturer is a connection that hands a step's response to its captures:
// the std path's (a step that captures goes through net/http).
type capturer interface {
	doCapture(deadline time.Time, take func(http.Header, []byte) bool) (result.Code, result.Outcome)
}

// flowCapture is one value a step takes from its response, kept in
// template.Vars.Captured[slot].
type flowCapture struct {
	slot int
	c    plan.Capture
}

// newFlowClient builds the client of every step of p's flow.
func newFlowClient(p *plan.Probe) (*flowClient, error) {
	f := &flowClient{src: newVarSource(p)}
	f.aborted, f.abort = context.WithCancel(context.Background())
	slot := 0
	for _, st := range p.Flow {
		fs := flowStep{name: st.Name, live: live.Nop{}, timeout: st.Request.Timeout, think: st.Think}
		for _, c := range st.Captures {
			fs.captures = append(fs.captures, flowCapture{slot: slot, c: c})
			slot++
		}
		c, err := newClient(st.Request, p.Name, len(fs.captures) > 0, nil)
		if err != nil {
			f.Close()
			return nil, err
		}
		fs.client = c
		f.steps = append(f.steps, fs)
	}
	return f, nil
}

func (f *flowClient) captured() int {
	n := 0
	for _, st := range f.steps {
		n += len(st.captures)
	}
	return n
}

// NewConn returns one virtual user.
func (f *flowClient) NewConn() Conn {
	c := &flowConn{f: f, vars: template.NewVars(f.captured())}
	for _, st := range f.steps {
		conn := st.client.newConnWith(c.vars)
		var take capturer
		if len(st.captures) > 0 {
			take = conn.(capturer) // a step that captures is on net/http
		}
		c.conns = append(c.conns, conn)
		c.capturers = append(c.capturers, take)
		rec := newStepRecorder()
		c.recs = append(c.recs, rec)
		c.misses = append(c.misses, result.Codes{})
	}
	f.mu.Lock()
	for _, rec := range c.recs {
		rec.within(f.window)
	}
	c.measureFrom = f.measureFrom
	f.conns = append(f.conns, c)
	f.mu.Unlock()
	return c
}

func (f *flowClient) Abort() {
	f.abort()
	for _, st := range f.steps {
		st.client.Abort()
	}
}

func (f *flowClient) Close() {
	for _, st := range f.steps {
		if st.client != nil {
			st.client.Close()
		}
	}
}

// startLevel begins a level: every user's step figures are emptied. No
// iteration is under way (the engine waits for them between levels).
func (f *flowClient) startLevel(measureFrom time.Time, window time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.measureFrom, f.window = measureFrom, window
	for _, c := range f.conns {
		c.measureFrom = measureFrom
		c.thinkSum, c.iterations = 0, 0
		for _, m := range c.misses {
			clear(m)
		}
		for _, rec := range c.recs {
			rec.reset()
			rec.within(window)
		}
	}
}

// figures are the level's figures of each step, and the mean think time
// of its iterations.
func (f *flowClient) figures(measured time.Duration) ([]result.FlowFigures, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var think time.Duration
	var iterations int64
	for _, c := range f.conns {
		think += c.thinkSum
		iterations += c.iterations
	}
	if iterations > 0 {
		think /= time.Duration(iterations)
	}
	out := make([]result.FlowFigures, len(f.steps))
	total := newStepRecorder()
	for i, st := range f.steps {
		total.reset()
		misses := result.Codes{}
		for _, c := range f.conns {
			total.merge(c.recs[i])
			for code, n := range c.misses[i] {
				misses[code] += n
			}
		}
		s := total.summarize(0, st.name, measured, true)
		out[i] = result.FlowFigures{Name: st.name, Attempts: s.Attempts, ErrorRatio: s.ErrorRatio,
			Latency: s.Latency, Responses: s.Responses, HTTPErrors: s.HTTPErrors, Errors: s.Errors, CaptureMisses: misses}
	}
	return out, think
}

// flowConn is one virtual user: a connection for each step, the values
// its iterations carry, and the figures of its step attempts.
type flowConn struct {
	f           *flowClient
	conns       []Conn
	capturers   []capturer // by step: the step's Conn when it captures, else nil
	vars        *template.Vars
	recs        []*stepRecorder
	misses      []result.Codes // by step and code: responses its captures found nothing in
	measureFrom time.Time
	thinkTime   time.Duration // the think time of the last iteration
	// thinkSum and iterations are those of the iterations started in the
	// level's measured window: a virtual user is busy thinking too.
	thinkSum   time.Duration
	iterations int64
}

// Do runs one iteration: each step in turn, until one fails. It returns
// the failed step's code and outcome, or the last step's. A capture that
// finds nothing fails its step as an http_error: the response came, but
// not one the flow can go on with. deadline is not used: each step has its
// own timeout.
func (c *flowConn) Do(time.Time) (code result.Code, o result.Outcome) {
	c.f.src.row(c.vars)
	c.thinkTime = 0
	if started := time.Now(); !c.measureFrom.IsZero() && !started.Before(c.measureFrom) {
		defer func() { c.thinkSum += c.thinkTime; c.iterations++ }()
	}
	for i := range c.f.steps {
		st := &c.f.steps[i]
		c.f.src.index(c.vars)
		sent := time.Now()
		missed := false
		if take := c.capturers[i]; take != nil {
			code, o = take.doCapture(sent.Add(st.timeout), func(h http.Header, body []byte) bool {
				missed = !c.capture(st, h, body)
				return !missed
			})
		} else {
			code, o = c.conns[i].Do(sent.Add(st.timeout))
		}
		took := time.Since(sent)
		st.live.Attempt(o, code, took.Seconds())
		if !c.measureFrom.IsZero() && !sent.Before(c.measureFrom) { // zero: no level measured yet
			c.recs[i].record(o, code, took, sent.Sub(c.measureFrom))
			if missed {
				c.misses[i][code]++
			}
		}
		if o != result.Success {
			return code, o
		}
		if !c.think(st.think) {
			return code, o
		}
	}
	return code, o
}

// think pauses as the step says; false when the run was aborted meanwhile.
func (c *flowConn) think(t *plan.Think) bool {
	if t == nil || t.Max <= 0 {
		return true
	}
	d := t.Min
	if spread := int64(t.Max - t.Min); spread > 0 {
		d += time.Duration(c.vars.Rand.Int64N(spread + 1))
	}
	c.thinkTime += d
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-c.f.aborted.Done():
		return false
	}
}

// capture takes every value st captures from a response; false when one
// is not there.
func (c *flowConn) capture(st *flowStep, h http.Header, body []byte) bool {
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
		c.vars.Captured[fc.slot] = v
	}
	return true
}

func (c *flowConn) Close() {
	for _, conn := range c.conns {
		conn.Close()
	}
}

// thought is the think time of the iteration the user ran last: latency
// leaves it out (docs/templates.md, "Flows": iteration time without think time).
func (c *flowConn) thought() time.Duration { return c.thinkTime }

// useLive gives a flow's steps their live series, the request families
// with the step label. The engine's own Attempt, once per iteration, then
// counts in none: a request family counts requests.
func (f *flowClient) useLive(sink live.Sink) live.Sink {
	for i := range f.steps {
		f.steps[i].live = sink.Step(f.steps[i].name)
	}
	return iterationLive{sink}
}

// iterationLive is a flow's Live as the engine sees it: an iteration's
// requests were counted by its steps.
type iterationLive struct{ live.Sink }

func (iterationLive) Attempt(result.Outcome, result.Code, float64) {}

// flowFigures adds a flow's figures to the level's step: each step's own,
// and, in a closed loop, the virtual users' think time to the users in
// flight (Little's law over the whole iteration: a user who thinks is
// busy). load_held_ratio already counts each iteration whole, think time
// included, from its start to its end.
func (e *engine) flowFigures(step *result.Step, measured time.Duration, closedLoop bool) {
	var think time.Duration
	step.Flow, think = e.figures.figures(measured)
	if closedLoop && think > 0 {
		step.InFlight += step.Throughput * think.Seconds()
	}
}
