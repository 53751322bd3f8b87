package config

import (
	"net/url"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
)

// Defaults of the guard's sections, applied where a file opens them.
var (
	defaultGuard           = plan.Guard{Window: model.Duration(time.Second), For: 1}
	defaultPrometheusGuard = plan.PrometheusGuard{
		Prometheus: plan.Prometheus{HTTPClientConfig: noRedirects(commoncfg.DefaultHTTPClientConfig)},
		Interval:   model.Duration(5 * time.Second),
		OnError:    plan.OnErrorAbort,
	}
	defaultGuardQuery = plan.GuardQuery{For: 1}
)

// maxGuardFor bounds a guard's `for`: beyond it a guard never fires within
// any run a config allows.
const maxGuardFor = 1000

// A guard asks its Prometheus a few questions now and then: at most
// maxGuardQueries, every minGuardInterval at most, so that it can never
// become load on a host no allowlist covers (docs/guards.md).
const (
	minGuardInterval = model.Duration(time.Second)
	maxGuardQueries  = 20
)

func noRedirects(c commoncfg.HTTPClientConfig) commoncfg.HTTPClientConfig {
	c.FollowRedirects = false
	return c
}

func (v *validator) guard(c *Config, pr *Probe, p keyPath, dir string) {
	g := &pr.Guard
	v.positive(p.to("window"), g.Window)
	if s := pr.Load.StepDuration; g.Live() && len(pr.Load.Phases) == 0 && g.Window > s && s > 0 {
		v.errorf(p.to("window"), "is longer than step_duration (%s): no window of a step would be judged", s)
	}
	if !(g.ErrorRatio >= 0 && g.ErrorRatio < 1) {
		v.errorf(p.to("error_ratio"), "must be in [0, 1) (got %s; 0: no error-ratio guard)", num(g.ErrorRatio))
	}
	if l := g.Latency; l != nil {
		lp := p.to("latency")
		if !(l.Quantile > 0 && l.Quantile < 1) {
			v.errorf(lp.to("quantile"), "must be in (0, 1) (got %s)", num(l.Quantile))
		}
		v.positive(lp.to("max"), l.Max)
	}
	v.guardFor(p.to("for"), g.For)
	if g.Prometheus != nil {
		v.prometheusGuard(c, g.Prometheus, p.to("prometheus"), dir)
	}
}

func (v *validator) guardFor(p keyPath, n int) {
	if n < 1 || n > maxGuardFor {
		v.errorf(p, "must be from 1 to %d (got %d)", maxGuardFor, n)
	}
}

func (v *validator) prometheusGuard(c *Config, g *plan.PrometheusGuard, p keyPath, dir string) {
	v.prometheus(c, &g.Prometheus, p, dir, "a guard")
	if g.Interval < minGuardInterval {
		v.errorf(p.to("interval"), "must be at least %s (got %s): a guard asks, it must not load its Prometheus", minGuardInterval, g.Interval)
	}
	if g.OnError != plan.OnErrorAbort && g.OnError != plan.OnErrorIgnore {
		v.errorf(p.to("on_error"), "must be abort or ignore (got %q)", g.OnError)
	}
	qp := p.to("queries")
	switch n := len(g.Queries); {
	case n == 0:
		v.errorf(qp, "at least one query is required")
	case n > maxGuardQueries:
		v.errorf(qp, "%d queries, more than %d", n, maxGuardQueries)
	}
	names := map[string]int{}
	for i, q := range g.Queries {
		ip := qp.to(i)
		switch q.Name {
		case plan.GuardErrorRatio, plan.GuardLatency:
			v.errorf(ip.to("name"), "%q is the name of a live guard", q.Name)
		case fleet.GuardName:
			v.errorf(ip.to("name"), "%q is the name of the guard by which a fleet's replicas stop together", q.Name)
		default:
			v.uniqueName(ip.to("name"), "guard", q.Name, names, "queries", i)
		}
		if strings.TrimSpace(q.Query) == "" {
			v.errorf(ip.to("query"), "required")
		}
		switch {
		case q.Min == nil && q.Max == nil:
			v.errorf(ip, "min, max or both are required: the range the result must keep")
		case q.Min != nil && q.Max != nil && !(*q.Min <= *q.Max):
			v.errorf(ip.to("max"), "must not be below min (%s)", num(*q.Min))
		}
		v.guardFor(ip.to("for"), q.For)
	}
}

// prometheus checks the Prometheus that who asks at p: an http or https
// URL without credentials, that no probe of c loads, reached by valid
// client settings that follow no redirect.
func (v *validator) prometheus(c *Config, s *plan.Prometheus, p keyPath, dir, who string) {
	up := p.to("url")
	if u, err := url.Parse(s.URL); s.URL == "" {
		v.errorf(up, "required")
	} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		v.errorf(up, "%q is not an http or https URL with a host", s.URL)
	} else if u.User != nil {
		v.errorf(up, "credentials in the URL are not allowed: use basic_auth")
	} else {
		v.notLoaded(c, u, up)
	}
	v.clientConfig(&s.HTTPClientConfig, p, dir)
	if s.HTTPClientConfig.FollowRedirects {
		v.errorf(p.to("follow_redirects"), "%s follows no redirect: one could send its queries to a host allowed_targets does not see, or to loadprobe itself", who)
	}
}

// notLoaded rejects a Prometheus that a probe of c loads: the Prometheus
// that judges the target must never be under load itself (docs/guards.md,
// "The guard's Prometheus").
func (v *validator) notLoaded(c *Config, u *url.URL, p keyPath) {
	guarded := v.endpoint(u)
	for _, pr := range c.Probes {
		reqs := []Request{pr.Request}
		for _, s := range pr.Flow {
			reqs = append(reqs, s.Request)
		}
		for _, r := range reqs {
			if t, err := url.Parse(r.URL); err == nil && t.Host != "" && v.endpoint(t).same(guarded) {
				spelt := ""
				if t.Host != u.Host {
					spelt = " (as " + t.Host + ")"
				}
				v.errorf(p, "%s is the target of probe %q%s: the Prometheus that watches a target is never loaded", u.Host, pr.Name, spelt)
				return
			}
		}
	}
}
