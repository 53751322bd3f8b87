package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
)

// guardFamilies are the series of the guards' evaluations
// (docs/guards.md, "Metrics").
type guardFamilies struct {
	value    *prometheus.GaugeVec
	breaches *prometheus.CounterVec
	errors   *prometheus.CounterVec
	stopped  *prometheus.GaugeVec
}

func newGuardFamilies() *guardFamilies {
	return &guardFamilies{
		value: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "guard_value",
			Help:      "The guard's last evaluated value: a live guard's window error ratio or latency quantile in seconds, a Prometheus guard's query result.",
		}, []string{"probe", "guard"}),
		breaches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "guard_breaches_total",
			Help:      "Evaluations of the guard outside its limits: windows over a live guard's limit, query results outside [min, max].",
		}, []string{"probe", "guard"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "guard_errors_total",
			Help:      "Evaluations of a Prometheus guard that gave no value: the query failed, timed out or returned no sample.",
		}, []string{"probe", "guard"}),
		stopped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: fleet.StoppedMetric,
			Help: "The start of the probe's last run that a guard of this replica stopped, in Unix seconds (a fleet's run: its aligned start); 0 before any. The fleet's other replicas read it to stop that run too.",
		}, []string{"probe"}),
	}
}

func (f *guardFamilies) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.value, f.breaches, f.errors, f.stopped}
}

func (f *guardFamilies) forget(l prometheus.Labels) {
	f.value.DeletePartialMatch(l)
	f.breaches.DeletePartialMatch(l)
	f.errors.DeletePartialMatch(l)
	f.stopped.DeletePartialMatch(l)
}

// DeclareGuards creates the counters of p's guards at 0, so that
// increase() sees a probe's first breach.
func (c *Collector) DeclareGuards(p *plan.Probe) {
	var names []string
	if p.Guard.ErrorRatio > 0 {
		names = append(names, plan.GuardErrorRatio)
	}
	if p.Guard.Latency != nil {
		names = append(names, plan.GuardLatency)
	}
	if g := p.Guard.Prometheus; g != nil {
		for _, q := range g.Queries {
			names = append(names, q.Name)
		}
	}
	for _, name := range names {
		c.guards.breaches.WithLabelValues(p.Name, name)
		c.guards.errors.WithLabelValues(p.Name, name)
	}
	if len(names) > 0 {
		c.guards.stopped.WithLabelValues(p.Name)
	}
}

var _ live.Guards = (*Live)(nil)

// Guard records one evaluation of a guard of the probe.
func (l *Live) Guard(name string, value float64, breached bool) {
	l.c.guards.value.WithLabelValues(l.probe, name).Set(value)
	if breached {
		l.c.guards.breaches.WithLabelValues(l.probe, name).Inc()
	}
}

// GuardError records an evaluation of a guard that gave no value.
func (l *Live) GuardError(name string) {
	l.c.guards.errors.WithLabelValues(l.probe, name).Inc()
}

// Stopped records the start of the run a guard of the probe stopped.
func (l *Live) Stopped(run time.Time) {
	l.c.guards.stopped.WithLabelValues(l.probe).Set(float64(run.UnixMilli()) / 1e3)
}

// RegisterPaused registers loadprobe_paused on reg, read from paused at
// each scrape.
func RegisterPaused(reg prometheus.Registerer, paused func() bool) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "paused",
		Help:      "1 while the pause switch (POST /-/pause, --paused) holds all load, else 0.",
	}, func() float64 {
		if paused() {
			return 1
		}
		return 0
	}))
}
