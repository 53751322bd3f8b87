package prober

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// streams is the workload of a gRPC stream probe (docs/grpc.md,
// "Streams"): each closed-loop user is a stream on its own schedule, whose
// every message is an attempt, and a step hands it the whole of its time
// (streamer) instead of asking it for one attempt after another.
type streams struct {
	t         transport.Streams
	src       *varSource
	names     []string
	templated bool
}

func newStreams(ctx context.Context, p *plan.Probe, sink live.Sink) (workload, error) {
	ss, _ := sink.(live.Streams)
	t, _, err := transport.ChooseStreams(ctx, p.Request, ss)
	if err != nil {
		return nil, err
	}
	return &streams{t: t, src: newVarSource(p), names: p.Vars, templated: p.Request.Templated}, nil
}

func (w *streams) newUser() user {
	vars := template.NewVars(len(w.names))
	var next func()
	if w.templated {
		next = func() { w.src.attempt(vars) }
	}
	return &streamUser{st: w.t.NewStream(vars, next)}
}

func (w *streams) abort()              { w.t.Abort() }
func (w *streams) close()              { w.t.Close() }
func (w *streams) steps() []string     { return nil }
func (w *streams) scriptError() string { return "" }

// streamer is a user that streams: the engine hands it a step's time.
type streamer interface {
	stream(until time.Time, m transport.Messages)
}

type streamUser struct{ st transport.Stream }

// do makes one exchange on a stream of its own, for the settle.
func (u *streamUser) do(deadline time.Time, _ stepObserver) (result.Code, result.Outcome, time.Duration) {
	code, o := u.st.Do(deadline)
	return code, o, 0
}

func (u *streamUser) stream(until time.Time, m transport.Messages) { u.st.Run(until, m) }
func (u *streamUser) close()                                       { u.st.Close() }

// messages records one stream's messages as observe records attempts,
// each from its intended send time; a dropped one counts in the live
// metrics and, due in the measured window, in the step's.
type messages struct {
	e           *engine
	rec         *stepRecorder
	measureFrom time.Time
	dropped     *atomic.Int64
}

func (m *messages) Message(o result.Outcome, code result.Code, from, finished time.Time) {
	m.e.observe(m.rec, o, code, from, finished, m.measureFrom, 0, 0)
}

func (m *messages) Dropped(due time.Time) {
	m.e.live.Dropped()
	if !due.Before(m.measureFrom) && !m.e.canceled() {
		m.dropped.Add(1)
	}
}

// stream runs one user's stream for the step: the load it holds is the
// stream, open (or opening again) from its start to its end, whatever
// its messages.
func (e *engine) stream(s streamer, rec *stepRecorder, measureFrom, end time.Time, dropped *atomic.Int64) {
	start := time.Now()
	e.live.InFlight(1)
	s.stream(end, &messages{e: e, rec: rec, measureFrom: measureFrom, dropped: dropped})
	e.live.InFlight(-1)
	held := heldWithin(start, time.Now(), measureFrom, end)
	rec.mu.Lock()
	rec.held += held
	rec.mu.Unlock()
}
