package main

import (
	"fmt"
	"time"

	"github.com/alecthomas/kingpin/v2"
	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/fleet"
)

// FleetOptions say where the replica with ordinal 0 of a fleet reads the
// fleet's runs back (DESIGN.md, "Beyond one machine").
type FleetOptions struct {
	PrometheusURL  string        // empty: no fleet figures
	HTTPConfigFile string        // prometheus/common HTTP client config for it; empty: none
	Selector       string        // label matchers that pick this fleet's series
	Wait           time.Duration // longest wait for every shard's steps to be scraped
}

func addFleetFlags(app *kingpin.Application) *FleetOptions {
	o := &FleetOptions{}
	app.Flag("fleet.prometheus-url", "Prometheus that scrapes every replica of this fleet: the replica with ordinal 0 reads each run's steps of every shard back from it, "+
		"and exports the fleet's breaking points, capacity and validity as loadprobe_fleet_*. Empty: no fleet figures.").Default("").StringVar(&o.PrometheusURL)
	app.Flag("fleet.http-config.file", "File with the HTTP client configuration (TLS, basic_auth, authorization, oauth2, as Prometheus's own) for --fleet.prometheus-url.").
		Default("").StringVar(&o.HTTPConfigFile)
	app.Flag("fleet.selector", `Label matchers that pick this fleet's series among others in that Prometheus, e.g. job="loadprobe",namespace="capacity".`).
		Default("").StringVar(&o.Selector)
	app.Flag("fleet.wait", "Longest wait after a run for every shard's last step to be scraped; a shard still missing then makes the fleet's run invalid.").
		Default("1m").DurationVar(&o.Wait)
	return o
}

// setUpFleet registers the series replicas of a fleet export and, on the
// replica with ordinal 0 given a Prometheus, has every run judged as its
// fleet's.
func (d *Daemon) setUpFleet() error {
	collector.RegisterFleet(d.reg, d, d.opts.Shard)
	o := d.opts.Fleet
	if o.PrometheusURL == "" || d.opts.Shard.Index != 0 {
		return nil
	}
	httpCfg := commoncfg.DefaultHTTPClientConfig
	if o.HTTPConfigFile != "" {
		c, _, err := commoncfg.LoadHTTPConfigFile(o.HTTPConfigFile)
		if err != nil {
			return fmt.Errorf("--fleet.http-config.file: %w", err)
		}
		httpCfg = *c
	}
	r, err := fleet.New(fleet.Options{
		URL: o.PrometheusURL, HTTP: httpCfg, Selector: o.Selector,
		Shards: d.opts.Shard.Replicas(), Wait: o.Wait,
	}, d.logger)
	if err != nil {
		return err
	}
	d.sched.SetFleetJudge(r.Judge)
	return nil
}
