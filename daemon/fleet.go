package daemon

import (
	"fmt"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/fleet"
)

// FleetOptions say where the replica with ordinal 0 of a fleet reads the
// fleet's runs back (docs/fleet.md, "Fleet figures (replica 0)").
type FleetOptions struct {
	PrometheusURL  string        // empty: no fleet figures
	HTTPConfigFile string        // prometheus/common HTTP client config for it; empty: none
	Selector       string        // label matchers that pick this fleet's series
	Wait           time.Duration // longest wait for every shard's steps to be scraped
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
