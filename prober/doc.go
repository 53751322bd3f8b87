// Package prober runs a probe's load against its target and measures it:
// one call, Run, takes a probe (config.Probe) and returns its result
// (result.Result), step by step. Run compiles the probe first, with the
// checks config.Parse makes, so that a probe built in Go cannot send a
// request that is not valid.
//
// It owns the run path from the config to the result: the engine (the
// stages of a run, the closed-loop workers and the open-loop pacer and
// senders, the settling between steps, cancellation), the transports the
// engine drives through one seam (connector.go: the lean HTTP/1.1 client,
// net/http for what only it does, WebSocket sessions, a flow of steps),
// the classification of every attempt into one outcome, and the step
// recorder that turns attempts into a step's figures. Runner.WithControl
// runs a probe and then its control: `loadprobe run` and the daemon's
// scheduler both run probes that way.
//
// What a result means (the breaking points, the diagnosis) belongs to
// package result; when runs happen, against which host and within which
// caps, to package schedule. Run sends load to the URL it is given: the
// allowlist (allowed_targets) is checked by config, when a file is loaded.
package prober
