package daemon

import (
	"fmt"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/fleet/readback"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/schedule"
)

// FleetOptions say where the replicas of a fleet read one another: the
// replica with ordinal 0 reads the fleet's runs back, and each replica its
// peers' guards (docs/fleet.md, "Fleet figures (replica 0)", "Fleet
// guards").
type FleetOptions struct {
	PrometheusURL  string        // empty: no fleet figures
	HTTPConfigFile string        // prometheus/common HTTP client config for it; empty: none
	Selector       string        // label matchers that pick this fleet's series
	Wait           time.Duration // longest wait for every shard's steps to be scraped
}

// Prometheus is where the replicas of a fleet read one another: the
// Prometheus of --fleet.prometheus-url with its client settings and
// selector, checked; nil without one. (A lone loadprobe's runs are not
// aligned, and watch no peers.)
func (o FleetOptions) Prometheus() (*fleet.Prometheus, error) {
	if o.PrometheusURL == "" {
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
	return &fleet.Prometheus{Prometheus: plan.Prometheus{URL: o.PrometheusURL, HTTPClientConfig: httpCfg}, Selector: o.Selector}, nil
}

// withFleet sets o's readers of the fleet in prom: every replica's reader
// of its fleet's steps (a search), and on the replica with ordinal 0 the
// judge of every run as its fleet's. Neither without a Prometheus.
func (d *Daemon) withFleet(o *schedule.Options, prom *fleet.Prometheus) error {
	if prom == nil {
		return nil
	}
	r, err := readback.New(readback.Options{Prometheus: *prom, Shards: d.opts.Shard.Replicas(), Wait: d.opts.Fleet.Wait}, d.logger)
	if err != nil {
		return err
	}
	o.Fleet, o.FleetSteps = prom, r
	if d.opts.Shard.Index == 0 {
		o.FleetJudge = r.Judge
	}
	return nil
}
