package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
)

// Step returns the recorder of the requests of one step of a flow: the
// live request families with its name as the step label. The gauges are
// the probe's. It returns the same recorder until the probe is forgotten.
func (l *Live) Step(name string) live.Sink {
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

// DeclareFlow makes a flow probe's request series its steps', each at 0,
// and drops the probe's own (step=""): a flow's iterations count in its
// steps only (the engine's flow workload), so those would stay 0 forever. A probe that
// a reload turned from a flow into a single request gets its own series
// back, made anew. Call it after Live, for every configured probe.
func (c *Collector) DeclareFlow(p *plan.Probe) {
	c.mu.Lock()
	wasFlow := false
	for key := range c.steps {
		wasFlow = wasFlow || key[0] == p.Name
	}
	c.mu.Unlock()
	if len(p.Flow) == 0 {
		if wasFlow {
			c.Forget(p.Name)
			c.get(p.Name)
		}
		return
	}
	l := c.get(p.Name)
	for _, s := range p.Flow {
		l.Step(s.Name)
	}
	own := prometheus.Labels{"probe": p.Name, "step": ""}
	c.requests.DeletePartialMatch(own)
	c.responses.DeletePartialMatch(own)
	c.duration.DeletePartialMatch(own)
}
