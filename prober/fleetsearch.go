package prober

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// A fleet searches without a coordinator (docs/fleet.md, "Fleet search"):
// after each step every replica reads the fleet's sum of that step from
// Prometheus, once every shard's figures of it are there, and gives the
// search those sums, so that every replica chooses the same next level
// from the same numbers.

// FleetSteps reads a fleet's steps back from the Prometheus that scrapes
// its replicas (fleet/readback's Reader).
type FleetSteps interface {
	// Step is the fleet's sum of own, this replica's step of p just
	// measured, read once every shard's figures of it are in Prometheus or
	// when by has passed: a shard still missing then is named in its
	// Problems.
	Step(ctx context.Context, p *plan.Probe, own result.Step, by time.Time) *result.Fleet
	// Join is the fleet's run of p made of the steps read, own being this
	// replica's run.
	Join(p *plan.Probe, own result.Result, reads []*result.Fleet) *result.Fleet
}

// fleetSearch is a replica's part in its fleet's search: the reader and
// the fleet's steps read so far.
type fleetSearch struct {
	reader FleetSteps
	reads  []*result.Fleet
}

// newFleetSearch is the fleet's search that a run of p with opts is part
// of; nil for a lone loadprobe, or a load that does not search.
func newFleetSearch(p *plan.Probe, opts Options) *fleetSearch {
	if p.Load.Search == nil || opts.Shard.Replicas() <= 1 || opts.FleetSteps == nil {
		return nil
	}
	return &fleetSearch{reader: opts.FleetSteps}
}

// decideFrom is what the planner chooses the stage after stage i from: the
// run's own steps, or on a replica of a searching fleet the fleet's. There
// the step just measured is handed over first, since its series are how
// the peers read it, and read back summed over every shard by the next
// aligned start. false when the run ends here: stopped meanwhile, or
// failed (r says why) because a shard's figures did not come.
func (e *engine) decideFrom(r *result.Result, i int) ([]result.Step, bool) {
	f := e.fleet
	if f == nil {
		return r.Steps, true
	}
	if e.opts.OnStep != nil {
		e.handOver(*r)
	}
	own := r.Steps[len(r.Steps)-1]
	read := f.reader.Step(e.ctx, e.probe, own, e.align.start(i+1))
	if e.canceled() {
		e.endStopped(r, nil)
		return nil, false
	}
	f.reads = append(f.reads, read)
	if len(read.Problems) > 0 {
		r.Ended = result.ResultFailed
		r.Error = result.Reason(fmt.Sprintf("the fleet's search cannot choose its level after %s: %s",
			r.Words().Level(own.Level), strings.Join(read.Problems, "; ")))
		return nil, false
	}
	var steps []result.Step
	for _, read := range f.reads {
		steps = append(steps, read.Steps...)
	}
	return steps, true
}

// joinFleet gives r, on the replica with ordinal 0, the fleet's run its
// search read step by step: what a fleet's run read back whole after it
// ended would be, with a level measured twice read twice.
func (e *engine) joinFleet(r *result.Result) {
	if f := e.fleet; f != nil && e.opts.Shard.Index == 0 && len(f.reads) > 0 {
		r.Fleet = f.reader.Join(e.probe, *r, f.reads)
	}
}
