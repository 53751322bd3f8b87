package main

import (
	"github.com/loadprobe/loadprobe/daemon"
)

func addFleetFlags(app flagGroup) *daemon.FleetOptions {
	o := &daemon.FleetOptions{}
	app.Flag("fleet.prometheus-url", "Prometheus that scrapes every replica of this fleet: the replica with ordinal 0 reads each run's steps of every shard back from it, "+
		"and exports the fleet's breaking points, capacity and validity as loadprobe_fleet_*; every replica reads its peers' guards there, to stop a run one of them stopped, and each step's fleet sums there, to search together. "+
		"Empty: no fleet figures, no search, and each replica stops on its own guards only.").Default("").StringVar(&o.PrometheusURL)
	app.Flag("fleet.http-config.file", "File with the HTTP client configuration (TLS, basic_auth, authorization, oauth2, as Prometheus's own) for --fleet.prometheus-url.").
		Default("").StringVar(&o.HTTPConfigFile)
	app.Flag("fleet.selector", `Label matchers that pick this fleet's series among others in that Prometheus, e.g. job="loadprobe",namespace="capacity".`).
		Default("").StringVar(&o.Selector)
	app.Flag("fleet.wait", "Longest wait after a run for every shard's last step to be scraped; a shard still missing then makes the fleet's run invalid. "+
		"A one-shot fleet (run) also starts this long after its last replica was first scraped, so that each sees them all first.").
		Default("1m").DurationVar(&o.Wait)
	return o
}
