// Package plan holds a probe as the engine runs it: what config.Compile
// returns from a probe of the config file (or one built in Go), once per
// load. Its sections (the load, the rules, the guards, the schedule) are
// the file's, as decoded; its workload (the request or the flow, their
// payloads and templates, the data rows, the gRPC descriptors, the
// credentials) is compiled: read and parsed once, never again by a run.
// A Probe is not changed once compiled, and runs of it may share it.
package plan
