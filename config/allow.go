package config

import (
	"errors"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"

	commoncfg "github.com/prometheus/common/config"
)

// The allowlist: load goes only to hosts that allowed_targets lists, and
// so does everything else a probe contacts (its proxy, its OAuth2 token
// endpoint). A glob matches a host label by label, as a TLS wildcard does:
// "*.example.com" matches "api.example.com" and not "a.b.example.com", and
// "127.0.0.*" does not match "127.0.0.1.attacker.example".

// globs checks the globs of allowed_targets.
func (v *validator) globs(globs []string) {
	at := keyPath{"allowed_targets"}
	if len(globs) == 0 {
		v.errorf(at, "at least one host glob is required: load goes only to hosts listed here")
	}
	for i, g := range globs {
		el := at.to(i)
		switch {
		case g == "":
			v.errorAt(at, el, "empty host glob")
		case strings.Contains(g, "/"):
			v.errorAt(at, el, "%q is not a host glob: give the host alone, without scheme or path", g)
		case strings.HasPrefix(g, "[") && strings.HasSuffix(g, "]") && strings.Contains(g, ":"):
			v.errorAt(at, el, "%q is a one-character class: write an IPv6 host without brackets (%q)", g, strings.Trim(g, "[]"))
		case strings.Count(g, ":") == 1:
			v.errorAt(at, el, "%q has a port: globs match the host alone", g)
		case strings.Trim(g, "*.") == "":
			v.errorAt(at, el, "%q would allow every host: list the hosts load may go to, with a * standing for one DNS label (\"*.staging.example.com\"); there is no switch to allow all", g)
		default:
			if _, err := path.Match(g, ""); err != nil {
				v.errorAt(at, el, "malformed glob %q: %v", g, err)
			}
		}
	}
}

// allowed reports whether host (without port) matches one of globs:
// case-insensitive, label by label, with path.Match within a label.
func allowed(globs []string, host string) bool {
	labels := strings.Split(strings.ToLower(host), ".")
	return slices.ContainsFunc(globs, func(g string) bool {
		gl := strings.Split(strings.ToLower(g), ".")
		if len(gl) != len(labels) || host == "" {
			return false
		}
		for i := range gl {
			if ok, err := path.Match(gl[i], labels[i]); !ok || err != nil {
				return false
			}
		}
		return true
	})
}

// url checks the probe's URL, its host included.
func (v *validator) url(c *Config, raw string, p keyPath) {
	// Without one, url.Parse reads "127.0.0.1:8080/work" as a path with a
	// colon in its first segment and "localhost/work" as a path alone.
	if !strings.Contains(raw, "://") {
		v.errorf(p, "URL %q: missing scheme (http://, https://, ws://, wss://, grpc://, grpcs://)", raw)
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		v.errorf(p, "invalid URL %q: %v", raw, err)
		return
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && !webSocketScheme(u.Scheme) && !grpcScheme(u.Scheme):
		v.errorf(p, "scheme must be http, https, ws, wss, grpc or grpcs (got %q)", u.Scheme)
	case u.Hostname() == "":
		v.errorf(p, "URL %q has no host", raw)
	case u.User != nil:
		v.errorf(p, "credentials in the URL are not allowed: use basic_auth")
	case !validPort(u.Port()):
		v.errorf(p, "invalid port %q", u.Port())
	default:
		v.host(c, p, u.Hostname(), "host %q is not in allowed_targets")
	}
}

// host reports host when allowed_targets does not allow it (an empty
// list is reported once, not again for every host).
func (v *validator) host(c *Config, p keyPath, host, format string) {
	if len(c.AllowedTargets) > 0 && !allowed(c.AllowedTargets, host) {
		v.errorf(p, format, strings.ToLower(host))
	}
}

// clientHosts checks the other hosts a probe contacts: a Host header's
// virtual host, the proxy and the OAuth2 token endpoint (and its proxy).
// A proxy taken from the environment is resolved here, with the process's
// environment, as net/http resolves it for the probe's URL.
func (v *validator) clientHosts(c *Config, r *Request, p keyPath) {
	for name, value := range r.Headers {
		if strings.EqualFold(name, "Host") {
			host := value
			if h, _, err := net.SplitHostPort(value); err == nil {
				host = h
			}
			host = strings.Trim(host, "[]") // an IPv6 literal, as globs write it
			if len(c.AllowedTargets) > 0 && !allowed(c.AllowedTargets, host) {
				v.errorAt(p.to("headers"), p.to("headers", name), "the Host header names host %q, which is not in allowed_targets", strings.ToLower(host))
			}
		}
	}
	hc := &r.HTTPClientConfig
	if u, err := url.Parse(r.URL); err == nil {
		v.proxy(c, &hc.ProxyConfig, u, p)
	}
	if o := hc.OAuth2; o != nil {
		op := p.to("oauth2")
		u, err := url.Parse(o.TokenURL)
		if err != nil || u.Hostname() == "" {
			v.errorf(op.to("token_url"), "invalid URL %q", o.TokenURL)
			return
		}
		v.host(c, op.to("token_url"), u.Hostname(), "token host %q is not in allowed_targets")
		v.proxy(c, &o.ProxyConfig, u, op)
	}
}

// proxy checks the proxy that pc gives for u, as the dialers ask for it
// (ProxyFor). proxy_url is checked even where no_proxy exempts u: it names
// a host the config may reach.
func (v *validator) proxy(c *Config, pc *commoncfg.ProxyConfig, u *url.URL, p keyPath) {
	if pc.ProxyURL.URL != nil {
		v.host(c, p.to("proxy_url"), pc.ProxyURL.Hostname(), "proxy host %q is not in allowed_targets")
	}
	if !pc.ProxyFromEnvironment {
		return
	}
	p = p.to("proxy_from_environment")
	proxy, err := ProxyFor(pc, u)
	switch {
	case err != nil:
		v.errorf(p, "the environment's proxy for %s: %v", u.Host, err)
	case proxy != nil:
		v.host(c, p, proxy.Hostname(), "the environment's proxy host %q is not in allowed_targets")
	}
}
