package daemon

import (
	"fmt"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/fleet/readback"
	"github.com/loadprobe/loadprobe/schedule"
)

// FleetOptions say where the replica with ordinal 0 of a fleet reads the
// fleet's runs back (docs/fleet.md, "Fleet figures (replica 0)").
type FleetOptions struct {
	PrometheusURL  string        // empty: no fleet figures
	HTTPConfigFile string        // prometheus/common HTTP client config for it; empty: none
	Selector       string        // label matchers that pick this fleet's series
	Wait           time.Duration // longest wait for every shard's steps to be scraped
}

// fleetJudge is what judges every run as its fleet's: on the replica with
// ordinal 0 given a Prometheus, the fleet reader; else nil.
func (d *Daemon) fleetJudge() (schedule.FleetJudge, error) {
	o := d.opts.Fleet
	if o.PrometheusURL == "" || d.opts.Shard.Index != 0 {
		return nil, nil
	}
	if err := readback.CheckSelector(o.Selector); err != nil {
		return nil, fmt.Errorf("--fleet.selector %w", err)
	}
	httpCfg := commoncfg.DefaultHTTPClientConfig
	if o.HTTPConfigFile != "" {
		c, _, err := commoncfg.LoadHTTPConfigFile(o.HTTPConfigFile)
		if err != nil {
			return nil, fmt.Errorf("--fleet.http-config.file: %w", err)
		}
		httpCfg = *c
	}
	r, err := readback.New(readback.Options{
		URL: o.PrometheusURL, HTTP: httpCfg, Selector: o.Selector,
		Shards: d.opts.Shard.Replicas(), Wait: o.Wait,
	}, d.logger)
	if err != nil {
		return nil, err
	}
	return r.Judge, nil
}
