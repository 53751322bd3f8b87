package collector

import (
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/prober/result"
)

// resolve sets l's step and resolves its request series for it (all at 0,
// so that rate() works from the first attempt).
func (l *Live) resolve(step string) {
	l.step = step
	l.durSuccess = l.c.duration.WithLabelValues(l.probe, result.Success.String(), step)
	l.durHTTPErr = l.c.duration.WithLabelValues(l.probe, result.HTTPError.String(), step)
	for o := result.Outcome(0); o < result.NumOutcomes; o++ {
		l.outcomes[o] = l.c.requests.WithLabelValues(l.probe, o.String(), step)
	}
}

// Step returns the recorder of the requests of one step of a flow: the
// live request families with its name as the step label. The gauges are
// the probe's. It returns the same recorder until the probe is forgotten.
func (l *Live) Step(name string) prober.Live {
	c := l.c
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]string{l.probe, name}
	if s, ok := c.steps[key]; ok {
		return s
	}
	// The probe's gauges and WebSocket families are shared; the request
	// families are resolved again with the step's label.
	s := new(Live)
	*s = *l
	s.resolve(name)
	c.steps[key] = s
	return s
}
