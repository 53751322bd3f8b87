package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// observe records one finished attempt (or a flow's iteration) in the
// live metrics and, when it started inside the measured window, in the
// step figures. from is the time latency is measured from: the send time
// in closed loop, the intended send time in open loop. think is the think
// time of a flow's iteration, which its latency leaves out. held is the
// part of the attempt's send-to-outcome time inside the measured window
// (closed loop).
func (e *engine) observe(rec *stepRecorder, o result.Outcome, code result.Code, from, finished, measureFrom time.Time, think, held time.Duration) {
	if e.canceled() {
		return // cut short by the end of the run, not by the target
	}
	latency := finished.Sub(from) - think
	if e.steps == nil {
		e.live.Attempt(o, code, latency.Seconds()) // a flow's steps count its requests
	}
	rec.mu.Lock()
	rec.held += held
	if e.judge != nil {
		rec.win.record(o, latency, e.judge.guard.Latency != nil)
	}
	if !from.Before(measureFrom) {
		rec.record(o, code, latency, from.Sub(measureFrom))
		rec.think += think
	} else if o.Responded() && !finished.Before(measureFrom) {
		rec.arrived(o)
	}
	rec.mu.Unlock()
	e.attempts.Add(1)
}

// stepObserver records the attempts of a flow's steps in their live series
// and, those sent inside the measured window from measureFrom, in rec's
// figures of each step.
func (e *engine) stepObserver(rec *stepRecorder, measureFrom time.Time) stepObserver {
	return func(i int, o result.Outcome, code result.Code, sent, finished time.Time, missed bool) {
		took := finished.Sub(sent)
		e.steps[i].Attempt(o, code, took.Seconds())
		if e.canceled() || sent.Before(measureFrom) {
			return
		}
		rec.mu.Lock()
		rec.flow[i].record(o, code, took, sent.Sub(measureFrom))
		if missed {
			rec.flow[i].missed(code)
		}
		rec.mu.Unlock()
	}
}

// heldWithin is the part of [sent, finished] inside [from, until]: the
// time an attempt held its connection's load during the measured window,
// answered or not (a request waiting for its timeout is held load).
func heldWithin(sent, finished, from, until time.Time) time.Duration {
	if sent.Before(from) {
		sent = from
	}
	if finished.After(until) {
		finished = until
	}
	return max(finished.Sub(sent), 0)
}

// useRecorders clears the recorders for the step's measured window,
// reusing their memory, and makes those of its first n workers.
func (e *engine) useRecorders(n int, window time.Duration) {
	e.recsMu.Lock()
	defer e.recsMu.Unlock()
	e.window = window
	for _, r := range e.recs {
		r.reset()
		r.within(window)
	}
	if n > 0 {
		e.grow(n - 1)
	}
}

// recorder returns the recorder of worker (or sender) i, made on first use
// when i is among the first recorderShards, shared with others beyond.
func (e *engine) recorder(i int) *stepRecorder {
	e.recsMu.Lock()
	defer e.recsMu.Unlock()
	return e.grow(i)
}

// grow is recorder, called with e.recsMu held.
func (e *engine) grow(i int) *stepRecorder {
	for len(e.recs) <= i && len(e.recs) < recorderShards {
		r := newStepRecorder(len(e.steps), e.opts.timesSeconds)
		r.within(e.window)
		e.recs = append(e.recs, r)
	}
	return e.recs[i%len(e.recs)]
}
