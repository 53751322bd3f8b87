package config

import (
	"bytes"
	"maps"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RedactedValue is what a redacted value reads.
const RedactedValue = "<secret>"

// sensitive lists the parts of a header or query parameter name that mark
// its value as a secret.
var sensitive = []string{"auth", "token", "secret", "key", "pass", "cred", "cookie", "session", "signature"}

// SensitiveName reports whether the value of a header or URL query parameter
// with this name is redacted: Authorization, Proxy-Authorization, Cookie,
// X-Api-Key, X-Auth-Token, Session-Id... any name that contains auth, token,
// secret, key, pass, cred, cookie, session or signature, in any case.
func SensitiveName(name string) bool {
	name = strings.ToLower(name)
	return slices.ContainsFunc(sensitive, func(s string) bool { return strings.Contains(name, s) })
}

// Redacted returns c as YAML with every secret shown as <secret>: the
// client's secrets (basic_auth password, authorization credentials, oauth2
// client_secret, bearer_token, TLS key: prometheus/common marshals them so),
// the values of request.headers whose names SensitiveName picks, the same
// query parameters in request.url, and a password in the URL. c is not changed.
func (c *Config) Redacted() ([]byte, error) {
	cp := *c
	cp.Probes = slices.Clone(c.Probes)
	for i := range cp.Probes {
		r := &cp.Probes[i].Request
		if len(r.Headers) > 0 {
			r.Headers = maps.Clone(r.Headers)
			for name := range r.Headers {
				if SensitiveName(name) {
					r.Headers[name] = RedactedValue
				}
			}
		}
		r.URL = redactURL(r.URL)
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

// String returns the redacted YAML of c.
func (c *Config) String() string {
	b, err := c.Redacted()
	if err != nil {
		return "<error marshaling config: " + err.Error() + ">"
	}
	return string(b)
}

// redactURL hides the values of sensitive query parameters. A URL cannot
// carry credentials: validation rejects them (basic_auth holds them).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, part := range parts {
			name, _, _ := strings.Cut(part, "=")
			if n, err := url.QueryUnescape(name); err == nil && SensitiveName(n) {
				parts[i] = name + "=" + RedactedValue
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}
