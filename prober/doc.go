// Package prober runs a probe's load against its target and measures it:
// one call, Run, takes a probe (config.Probe) and returns its result
// (prober/result), step by step.
//
// It owns the run path from the config to the result: the engine (the
// stages of a run, the closed-loop workers and the open-loop pacer and
// senders, the settling between steps, cancellation), the two HTTP clients
// (a lean HTTP/1.1 one and net/http for what only it does) and the
// classification of every attempt into one outcome, and the step recorder
// that turns attempts into a step's figures. Runner.WithControl runs a
// probe and then its control: `loadprobe run` and the daemon's scheduler
// both run probes that way.
//
// What a result means (the breaking points, the diagnosis) belongs to
// prober/result; when runs happen, against which host and within which
// caps, to prober/schedule. Run sends load to the URL it is given: the
// allowlist (allowed_targets) is checked by config, when a file is loaded.
package prober
