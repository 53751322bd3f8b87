package config

import (
	"math"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
)

// defaultTelemetry is a telemetry section's defaults: a week of live
// traffic, and a Prometheus reached as a guard's is.
var (
	defaultTelemetry = plan.Telemetry{
		Prometheus: defaultPrometheusGuard.Prometheus,
		PeakWindow: model.Duration(7 * 24 * time.Hour),
	}
	defaultResource = plan.Resource{Max: 1}
)

// maxResources bounds a probe's saturation queries: each is asked once a
// step after the run, and like a guard's they must not load the
// Prometheus (docs/telemetry.md).
const maxResources = maxGuardQueries

func (v *validator) telemetry(c *Config, pr *Probe, p keyPath, dir string) {
	t := pr.Telemetry
	if t == nil {
		return
	}
	v.prometheus(c, &t.Prometheus, p.to("prometheus"), dir, "telemetry")
	if t.Traffic == "" && len(t.Saturation) == 0 {
		v.errorf(p, "traffic, saturation or both are required: what to read of the target's Prometheus")
	}
	if t.Traffic != "" && strings.TrimSpace(t.Traffic) == "" {
		v.errorf(p.to("traffic"), "is blank")
	}
	if t.PeakWindow < model.Duration(time.Minute) {
		v.errorf(p.to("peak_window"), "must be at least 1m (got %s): the live peak is the highest traffic over it", t.PeakWindow)
	}
	sp := p.to("saturation")
	if n := len(t.Saturation); n > maxResources {
		v.errorf(sp, "%d resources, more than %d", n, maxResources)
	}
	names := map[string]int{}
	for i, r := range t.Saturation {
		ip := sp.to(i)
		v.uniqueName(ip.to("name"), "resource", r.Name, names, "saturation", i)
		if strings.TrimSpace(r.Query) == "" {
			v.errorf(ip.to("query"), "required")
		}
		if math.IsNaN(r.Max) || math.IsInf(r.Max, 0) {
			v.errorf(ip.to("max"), "must be a finite number (got %s)", num(r.Max))
		}
	}
}

// guardPrometheus gives a guard whose Prometheus names no URL the one of
// the probe's telemetry, with its client settings (docs/telemetry.md, "The
// telemetry block").
func guardPrometheus(pr *Probe) {
	if g := pr.Guard.Prometheus; g != nil && g.URL == "" && pr.Telemetry != nil {
		g.Prometheus = pr.Telemetry.Prometheus
	}
}
