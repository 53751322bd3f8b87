// Package prober is the load engine: one call, Run, takes a compiled probe
// (plan.Probe) and returns its result (result.Result), step by step.
//
// It knows load and time: the stages of a run (a fixed ramp or profile, or
// a search's levels chosen from the steps so far), the closed-loop workers
// and the open-loop senders, the settling between steps, the live and
// Prometheus guards, cancellation, and the recorder that turns attempts
// into a step's figures. What it repeats is a workload: a request's
// attempt, or a flow's iteration, each measured the same way. How an
// attempt reaches its target is the transport's (package transport and
// one package per protocol under it); what a result means, package
// analysis's; when runs happen, against which host and within which caps,
// package schedule's. Runner.WithControl runs a probe and then its
// control: `loadprobe run` and the daemon's scheduler both run probes that
// way. Run sends load to the URL it is given: the allowlist
// (allowed_targets) is checked by config, when a file is loaded.
package prober
