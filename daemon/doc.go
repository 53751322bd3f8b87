// Package daemon is loadprobe as a long-running exporter: New loads the
// config file, and Run starts the scheduler, which runs every probe on its
// schedule, and serves what the runs found until its context ends.
//
// It serves /metrics (the collector's families and the process's own), the
// latest results as JSON (/api/v1/results), the status page (/), the config
// it runs (/config) and the health and readiness endpoints. It reloads the
// config on SIGHUP or, with the lifecycle endpoints enabled, on POST
// /-/reload, keeping the old config when the new one does not load; the same
// switch lets a run be started, and all load paused and resumed, over HTTP.
// With a storage path, the latest results outlive a restart. Under a fleet
// (--shard) replica 0 reads the fleet's steps back from Prometheus after
// each run and serves its sums.
package daemon
