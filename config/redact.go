package config

import (
	"bytes"
	"maps"
	"net/url"
	"slices"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/plan"
)

// redacted is what a hidden value reads.
const redacted = "<secret>"

// harmless lists the header, parameter and query names whose values /config
// shows: they describe the request and carry no credential. Every other
// value is hidden, whatever its name: a secret can hide behind any name
// (X-Vault-Tkn, X-Csrf), and a list of suspicious words always misses one.
var harmless = []string{
	"accept", "accept-charset", "accept-encoding", "accept-language", "cache-control",
	"connection", "content-encoding", "content-language", "content-type", "host",
	"origin", "pragma", "referer", "te", "user-agent",
	"grant_type", "scope", "audience", "resource", // OAuth2 parameters
}

func isHarmless(name string) bool {
	return slices.Contains(harmless, strings.ToLower(name))
}

// Redacted returns c as YAML with every secret shown as <secret>: what
// prometheus/common marks secret (passwords, credentials, client secrets,
// TLS keys, proxy headers), the values of every header (headers and
// http_headers), OAuth2 endpoint parameter and URL query parameter (of the
// probe's URL and of the token URL) whose name is not harmless. c is not
// changed.
func (c *Config) Redacted() ([]byte, error) {
	cp := *c
	cp.Probes = slices.Clone(c.Probes)
	for i := range cp.Probes {
		pr := &cp.Probes[i]
		if pr.Flow != nil {
			// The probe's request is its first step's (flow.go): shown there.
			pr.Request = Request{}
			pr.Flow = slices.Clone(pr.Flow)
			for j := range pr.Flow {
				redactRequest(&pr.Flow[j].Request)
			}
			continue
		}
		redactRequest(&pr.Request)
	}
	for i := range cp.Probes {
		if g := cp.Probes[i].Guard.Prometheus; g != nil {
			shown := *g // shared with c: hidden in a copy
			redactPrometheus(&shown.Prometheus)
			cp.Probes[i].Guard.Prometheus = &shown
		}
		if t := cp.Probes[i].Telemetry; t != nil {
			shown := *t
			redactPrometheus(&shown.Prometheus)
			cp.Probes[i].Telemetry = &shown
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&cp); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// redactPrometheus hides the secrets of a copy of a Prometheus's settings.
func redactPrometheus(p *plan.Prometheus) {
	p.URL = redactURL(p.URL)
	redactClient(&p.HTTPClientConfig)
}

// String returns the redacted YAML of c.
func (c *Config) String() string {
	b, err := c.Redacted()
	if err != nil {
		return "<error marshaling config: " + err.Error() + ">"
	}
	return string(b)
}

// redactMap returns a copy of m whose values are hidden but for harmless names.
func redactMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	m = maps.Clone(m)
	for name := range m {
		if !isHarmless(name) {
			m[name] = redacted
		}
	}
	return m
}

// redactURL hides the query values of s but for harmless names. A URL
// cannot carry credentials: validation rejects them (basic_auth holds them).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.RawQuery == "" {
		return s
	}
	parts := strings.Split(u.RawQuery, "&")
	for i, part := range parts {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err != nil || !isHarmless(n) {
			parts[i] = name + "=" + redacted
		}
	}
	u.RawQuery = strings.Join(parts, "&")
	return u.String()
}

// redactRequest hides the secrets of r (see Redacted).
func redactRequest(r *Request) {
	r.URL = redactURL(redactEnv(r.URL))
	r.Headers = redactMap(r.Headers)
	for name, value := range r.Headers {
		r.Headers[name] = redactEnv(value)
	}
	r.Body = redactEnv(r.Body)
	if g := r.GRPC; g != nil {
		shown := *g // shared with c: hidden in a copy
		shown.Metadata = redactMap(g.Metadata)
		for name, value := range shown.Metadata {
			shown.Metadata[name] = redactEnv(value)
		}
		shown.Message = redactEnv(shown.Message)
		r.GRPC = &shown
	}
	redactClient(&r.HTTPClientConfig)
}

// redactClient hides the header values and OAuth2 parameters of client
// settings (prometheus/common marks and hides the other secrets itself).
func redactClient(hc *commoncfg.HTTPClientConfig) {
	if h := hc.HTTPHeaders; h != nil {
		hidden := &commoncfg.Headers{Headers: map[string]commoncfg.Header{}}
		for name, v := range h.Headers {
			if !isHarmless(name) && len(v.Values) > 0 {
				v.Values = slices.Repeat([]string{redacted}, len(v.Values))
			}
			hidden.Headers[name] = v
		}
		hc.HTTPHeaders = hidden
	}
	if o := hc.OAuth2; o != nil {
		oc := *o
		oc.TokenURL = redactURL(oc.TokenURL)
		oc.EndpointParams = redactMap(oc.EndpointParams)
		hc.OAuth2 = &oc
	}
}
