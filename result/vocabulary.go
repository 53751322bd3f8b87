package result

import (
	"strconv"

	"github.com/loadprobe/loadprobe/plan"
)

// This file is the one home of the result's vocabulary: the kinds of load
// and how their levels read, the run results, the breaking-point rules and
// the latency quantiles. run's table, the status page, the collector and the
// diagnosis all read it from here.

// StepText names a step's load: its level, or for phases `phase "sustained"
// (5 req/s)`. It is the one way a step is named, in run's table, the status
// page and the diagnosis.
func StepText(w plan.Words, s Step) string {
	switch {
	case w.Mode != plan.ModePhases:
		return w.Level(s.Level)
	case s.Name == "":
		return "the phase at " + w.Level(s.Level)
	}
	return "phase " + strconv.Quote(s.Name) + " (" + w.Level(s.Level) + ")"
}

// Words name r's levels as its load and protocol have them.
func (r Result) Words() plan.Words { return plan.Words{Mode: r.Mode, Protocol: r.Protocol} }

// RunResult is how a run ended, as in loadprobe_runs_total{result}.
type RunResult string

// The run results; ResultRunning marks a run still under way.
const (
	ResultCompleted RunResult = "completed"
	ResultAborted   RunResult = "aborted"
	ResultFailed    RunResult = "failed"
	ResultCanceled  RunResult = "canceled"
	ResultRunning   RunResult = "running"
)

// RunResults are the results of a finished run, the values of
// loadprobe_runs_total{result}.
var RunResults = [...]RunResult{ResultCompleted, ResultAborted, ResultFailed, ResultCanceled}

// What a search step was measured for, as in Step.Search (docs/search.md).
const (
	SearchGrow   = "grow"   // doubling from the start while no rule has fired
	SearchRefine = "refine" // bisecting a fired rule's bracket, or measuring a level again
)

// Searched reports whether r is a search's run: its steps ran in the order
// the search chose, not in order of level.
func (r Result) Searched() bool {
	return len(r.Steps) > 0 && r.Steps[0].Search != ""
}

// Rule is a breaking-point rule, as in loadprobe_breaking_point_*{rule} and
// the keys of the JSON's breaking_points.
type Rule string

// The breaking-point rules (docs/design.md, "Three breaking points").
const (
	RuleKnee          Rule = "knee"
	RuleLatencyBudget Rule = "latency_budget"
	RuleFirstFailure  Rule = "first_failure"
)

// Rules lists the rules in the order reports show them.
var Rules = [...]Rule{RuleKnee, RuleLatencyBudget, RuleFirstFailure}

// Text is the rule's name in prose: "knee", "latency budget", "first failure".
func (r Rule) Text() string {
	switch r {
	case RuleLatencyBudget:
		return "latency budget"
	case RuleFirstFailure:
		return "first failure"
	}
	return string(r)
}

// Of is the rule's answer in b; nil when it never fired.
func (b BreakingPoints) Of(r Rule) *Point {
	switch r {
	case RuleKnee:
		return b.Knee
	case RuleLatencyBudget:
		return b.LatencyBudget
	case RuleFirstFailure:
		return b.FirstFailure
	}
	return nil
}

// Quantile is one of the latency figures a Step carries.
type Quantile struct {
	Q     float64
	Label string                  // p50, p90, p95, p99, p99.9 or max
	Field func(*Latency) *float64 // where a Latency holds it
}

// Of is the quantile's figure in l.
func (q Quantile) Of(l Latency) float64 { return *q.Field(&l) }

// Quantiles are the latency figures of a step in increasing order; the
// values of loadprobe_step_latency_seconds{quantile}, max as quantile 1.
var Quantiles = [...]Quantile{
	{0.5, "p50", func(l *Latency) *float64 { return &l.P50 }},
	{0.9, "p90", func(l *Latency) *float64 { return &l.P90 }},
	{0.95, "p95", func(l *Latency) *float64 { return &l.P95 }},
	{0.99, "p99", func(l *Latency) *float64 { return &l.P99 }},
	{0.999, "p99.9", func(l *Latency) *float64 { return &l.P999 }},
	{1, "max", func(l *Latency) *float64 { return &l.Max }},
}
