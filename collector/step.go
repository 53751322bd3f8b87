package collector

import "github.com/loadprobe/loadprobe/result"

// Step returns the recorder of the requests of one step of a flow: the
// live request families with its name as the step label. The gauges are
// the probe's. It returns the same recorder until the probe is forgotten.
func (l *Live) Step(name string) result.Live {
	c := l.c
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]string{l.probe, name}
	if s, ok := c.steps[key]; ok {
		return s
	}
	s := c.newLive(l.probe, name, l.statusLabels, l.closeLabels)
	c.steps[key] = s
	return s
}
