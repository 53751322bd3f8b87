package fleet

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
)

// Prometheus is where the replicas of a fleet meet: the Prometheus that
// scrapes every one of them, and the label matchers that pick this fleet's
// series among the others it holds.
type Prometheus struct {
	plan.Prometheus
	// Selector holds PromQL label matchers without braces, e.g.
	// `job="loadprobe"`; empty: none.
	Selector string
}

// Matchers is the selector as it follows a query's own matchers inside
// their braces: "" or a comma and the selector.
func (p *Prometheus) Matchers() string {
	if p.Selector == "" {
		return ""
	}
	return "," + p.Selector
}

// StoppedMetric is the family in which a replica exports the start of the
// last run of a probe that one of its guards stopped: its peers read it to
// stop the same run (docs/fleet.md, "Fleet guards").
const StoppedMetric = "loadprobe_guard_stopped_run_timestamp_seconds"

// GuardName names the fleet's guard among a probe's guards: the `guard`
// label of its evaluations and the guard of the abort it causes.
const GuardName = "fleet"

// stoppedSlack is how far apart two replicas' starts of one run may lie:
// their aligned starts are one boundary on clocks that agree, while the
// runs of one probe are at least a run's length apart.
const stoppedSlack = time.Second

// Guard is the guard that stops a replica's run of probe, aligned at run,
// within one evaluation of a peer's guard stopping its own run of it (as
// Prometheus scrapes that peer): the query reads 1 once a peer exported
// that run's start in StoppedMetric, else 0, and 1 breaches. It is asked
// as often as the probe's quickest guard judges, and a query that fails
// leaves the run going, each replica still guarded by its own guards. nil
// for a probe without guards, which no peer stops either.
func (p *Prometheus) Guard(probe string, g plan.Guard, run time.Time) *plan.PrometheusGuard {
	var every time.Duration
	if g.Live() {
		every = time.Duration(g.Window)
	}
	if pg := g.Prometheus; pg != nil && (every == 0 || time.Duration(pg.Interval) < every) {
		every = time.Duration(pg.Interval)
	}
	if every == 0 {
		return nil
	}
	since := float64(run.Add(-stoppedSlack).UnixMilli()) / 1e3
	never := 0.0
	return &plan.PrometheusGuard{
		Prometheus: p.Prometheus,
		Interval:   model.Duration(every),
		OnError:    plan.OnErrorIgnore,
		Queries: []plan.GuardQuery{{
			Name:  GuardName,
			Query: fmt.Sprintf(`(max(%s{probe=%q%s}) or vector(0)) >= bool %.3f`, StoppedMetric, probe, p.Matchers(), since),
			Max:   &never,
			For:   1,
		}},
	}
}
