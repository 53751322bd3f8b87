package main

import (
	"fmt"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// expectation is one key of a probe's expect as `run` judges a run by it
// (docs/configuration.md, "probes[]").
type expectation struct {
	text string // what is expected: "expected at least 150/s"
	got  string // what the run measured; empty when text's line says it
	held bool
}

// expectations judges r by each key of p's expect that is set. max_p99 and
// max_error_ratio read the step capacity was read at: a ramp runs past its
// breaking points on purpose, so the whole run would fail them.
func expectations(p *plan.Probe, r result.Result) []expectation {
	e := p.Expect
	var out []expectation
	if e.MinCapacity > 0 {
		out = append(out, expectation{
			text: "expected at least " + plainNumber(e.MinCapacity) + "/s",
			held: r.Capacity != nil && r.Capacity.Throughput >= e.MinCapacity,
		})
	}
	at := capacityStep(r)
	if e.MaxP99 > 0 {
		x := expectation{text: "expected p99 at most " + e.MaxP99.String() + " at capacity", got: "no capacity"}
		if at != nil {
			x.got, x.held = ms(at.Latency.P99), at.Latency.P99 <= time.Duration(e.MaxP99).Seconds()
		}
		out = append(out, x)
	}
	if m := e.MaxErrorRatio; m != nil {
		x := expectation{text: fmt.Sprintf("expected an error ratio of at most %.2f%% at capacity", 100**m), got: "no capacity"}
		if at != nil {
			x.got, x.held = fmt.Sprintf("%.2f%%", 100*at.ErrorRatio), at.ErrorRatio <= *m
		}
		out = append(out, x)
	}
	return out
}

// capacityStep is the step r's capacity was read at; nil without one.
func capacityStep(r result.Result) *result.Step {
	c := r.Capacity
	if c == nil {
		return nil
	}
	var at *result.Step
	for i, s := range r.Steps {
		if s.Level == c.Level && !s.Cut && (at == nil || s.Goodput == c.Throughput) {
			at = &r.Steps[i]
		}
	}
	return at
}

// expectationsHold says whether a run did what its probe's expect asks:
// it completed (or stopped escalating on its abort rule, which a ramp past
// its breaking point does), every expectation held, and a candidate it
// compared did not fail (docs/compare.md). A run a guard or
// the pause switch stopped did not: the target suffered, or the run was
// cut short (docs/guards.md).
func expectationsHold(p *plan.Probe, r result.Result) bool {
	if !ranOut(r) || r.Compare != nil && r.Compare.Verdict == result.VerdictFail {
		return false
	}
	for _, x := range expectations(p, r) {
		if !x.held {
			return false
		}
	}
	return true
}

// ranOut says whether r ran to its end or stopped on its abort rule.
func ranOut(r result.Result) bool {
	ended := r.Ended == result.ResultCompleted || r.Ended == result.ResultAborted
	return ended && (r.Abort == nil || r.Abort.By == result.ByErrorRatio)
}

// verdict is how the table says whether an expectation holds.
func verdict(x expectation, r result.Result) string {
	if x.held && ranOut(r) {
		return "met"
	}
	return "NOT met"
}
