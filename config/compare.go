package config

import (
	"net/url"
	"strings"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
)

// Compare is a probe's compare section: its rules, and the candidate's
// request, the probe's with the candidate's scheme://host:port, which
// validation builds (docs/compare.md).
type Compare struct {
	plan.Compare `yaml:",inline"`
	request      Request
}

var defaultCompare = Compare{Compare: plan.DefaultCompare}

// compare checks p's compare section and builds its candidate's request
// from request, p's request as written.
func (v *validator) compare(c *Config, p *Probe, request Request, cp keyPath, dir string, scope template.Scope) {
	cmp := p.Compare
	if cmp == nil {
		return
	}
	switch {
	case p.Flow != nil:
		v.errorf(cp, "a flow cannot be compared: compare a probe of one request")
		return
	case request.GRPC != nil || !strings.HasPrefix(request.URL, "http"):
		v.errorf(cp, "only HTTP and HTTPS probes can be compared")
		return
	case len(p.Load.Phases) > 0 || p.Schedule.Continuous:
		v.errorf(cp, "a profile or a continuous load has no capacity to compare: compare a ramp or a search")
		return
	}
	if !(cmp.MaxLoss >= 0 && cmp.MaxLoss < 1) {
		v.errorf(cp.to("max_loss"), "must be in [0, 1) (got %s)", num(cmp.MaxLoss))
	}
	if !(cmp.MaxLatencyGain >= 0) {
		v.errorf(cp.to("max_latency_gain"), "must be 0 or more (got %s)", num(cmp.MaxLatencyGain))
	}
	if !(cmp.Confidence > 0 && cmp.Confidence < 1) {
		v.errorf(cp.to("confidence"), "must be in (0, 1) (got %s)", num(cmp.Confidence))
	}
	scheme, rest, ok := splitOrigin(request.URL)
	cu, err := url.Parse(cmp.Candidate)
	switch {
	case cmp.Candidate == "":
		v.errorf(cp.to("candidate"), "required: the candidate's scheme://host:port")
		return
	case err != nil || cu.Host == "" || cu.User != nil || (cu.Path != "" && cu.Path != "/") || cu.RawQuery != "" || cu.Fragment != "":
		v.errorf(cp.to("candidate"), "%q is not a scheme://host:port: the rest of the request is the baseline's", cmp.Candidate)
		return
	case !ok:
		return // the request's own error says why
	case cu.Scheme != scheme:
		v.errorf(cp.to("candidate"), "%q: the candidate speaks the baseline's scheme (%s)", cmp.Candidate, scheme)
		return
	}
	request.URL = strings.TrimSuffix(cmp.Candidate, "/") + rest
	cmp.request = request
	v.request(c, &cmp.request, cp.to("candidate"), dir, scope)
}

// splitOrigin splits a URL as written into its scheme and what follows
// its host and port (path, query); ok is false without a scheme and host.
func splitOrigin(raw string) (scheme, rest string, ok bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", "", false
	}
	end := len(raw)
	if j := strings.IndexAny(raw[i+3:], "/?#"); j >= 0 {
		end = i + 3 + j
	}
	return raw[:i], raw[end:], end > i+3
}
