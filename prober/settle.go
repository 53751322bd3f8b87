package prober

import (
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// settle sends single requests, one at a time, until one gets a response
// within limit, so the next step (stage next) does not start on the
// backlog the target still works off (docs/design.md, "Settling between steps"). It gives up
// after settle_timeout, or at the next step's aligned start.
func (e *engine) settle(limit time.Duration, next int) time.Duration {
	start := time.Now()
	giveUp := e.settleBy(start, next)
	if len(e.users) == 0 {
		e.users = append(e.users, e.work.newUser())
	}
	u := e.users[0]
	// A flow's steps count their requests in their live series.
	steps := func(i int, o result.Outcome, code result.Code, sent, finished time.Time, _ bool) {
		e.steps[i].Attempt(o, code, finished.Sub(sent).Seconds())
	}
	timeout := time.Duration(e.probe.Request.Timeout)
	for !e.canceled() {
		sent := time.Now()
		if !sent.Before(giveUp) {
			break
		}
		deadline := sent.Add(timeout)
		if deadline.After(giveUp) {
			deadline = giveUp
		}
		e.live.InFlight(1)
		code, o, think := u.do(deadline, steps)
		finished := time.Now()
		e.live.InFlight(-1)
		took := finished.Sub(sent) - think
		if e.steps == nil {
			e.live.Attempt(o, code, took.Seconds())
		}
		if o.Responded() && took <= limit {
			break
		}
		if !o.Responded() {
			// A refused or reset target answers at once; pace the retries
			// instead of spinning on it.
			time.Sleep(min(limit, time.Until(giveUp), 100*time.Millisecond))
		}
	}
	return time.Since(start)
}

// mayOweBacklog tells whether a target may still work off what it accepted
// at step s: one that answered, or that let the client's deadline pass (a
// target so loaded that no response came in time owes the most). One that
// only refused, reset or failed the handshake accepted no work.
func mayOweBacklog(s result.Step) bool {
	for _, n := range s.Responses {
		if n > 0 {
			return true
		}
	}
	return s.Errors[result.Timeout.String()] > 0
}
