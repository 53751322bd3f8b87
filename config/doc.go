// Package config holds loadprobe's YAML schema, its defaults and its validation:
// it owns every config key of docs/configuration.md and the reload (SafeConfig, SIGHUP and
// /-/reload, the reload gauges). Everything downstream reads a validated,
// defaulted config and checks nothing again.
//
// LoadFile and Parse decode strictly (an unknown key is an error, in every
// section and in the inlined HTTP client settings), apply the defaults of
// each section, and validate the whole file. Every problem is reported (up
// to 20, then how many more), one per line, in file order, as
//
//	loadprobe.yml:14: probes[2].load.concurrency: levels must increase (got 8 after 16)
//
// A loaded config is complete and can be trusted as it is: every default is
// applied (readers need none of their own), methods and headers are valid
// HTTP, every host a probe contacts is in allowed_targets, every file the
// client settings name was readable, relative paths are resolved against
// the config file's directory and body_file is read into Request.Payload.
package config
