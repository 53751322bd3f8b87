package config

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/version"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
)

// compileRequest builds the plan of r, which validation found valid, at
// rp: its URL, headers and body as templates (fixed texts unless they vary
// per attempt), the client that sends it, and its credentials and TLS
// settings, read once (docs/configuration.md, "Which client sends the
// requests").
func (v *validator) compileRequest(r *Request, parts *requestParts, rp keyPath) *plan.Request {
	t := parts.templates
	templated := t != nil && !t.literal()
	if t != nil && !templated {
		t = t.written() // {{env}} only, read at load: a fixed request
	}
	pr := &plan.Request{
		Method: r.Method, Timeout: time.Duration(r.Timeout), KeepAlive: r.KeepAlive,
		HTTP2: r.HTTPClientConfig.EnableHTTP2, StreamsPerConnection: r.HTTP2.StreamsPerConnection,
		HTTP3: r.HTTP3, HTTP3Connections: r.HTTP3Connections,
		Whole: template.Text(r.URL), Body: template.Text(string(parts.payload)), Templated: templated,
	}
	pr.SetValidCodes(r.ValidStatusCodes)
	if parts.script != nil {
		pr.Script = parts.script
	}
	raw := r.URL
	if t != nil {
		pr.Whole, pr.Body = t.URL, t.Body
		raw = t.URL.Placeholder(sample)
	}
	u, err := url.Parse(raw)
	if err != nil {
		v.errorf(rp.to("url"), "%v", err)
		return nil
	}
	pr.URL = u
	pr.Target = requestTarget(pr.Whole, u)
	hc := r.HTTPClientConfig
	if u.Scheme == "http" || u.Scheme == "https" {
		pr.NetHTTP, pr.Client = netHTTPSetting(hc), hc
		if err := pinProxies(&pr.Client, u); err != nil {
			v.errorf(rp, "%v", err)
		}
	}
	switch {
	case pr.NetHTTP != "":
	case r.GRPC == nil && pr.WebSocket():
		proxy, err := ProxyFor(&hc.ProxyConfig, u)
		if err != nil {
			v.errorf(rp, "proxy for %s: %v", u.Host, err)
		}
		pr.Proxy = proxy
		fallthrough
	default:
		// The lean clients send the static credentials as a header, read
		// now; net/http's round tripper adds its own.
		if pr.Authorization, err = staticAuthorization(hc); err != nil {
			v.errorf(rp, "%v", err)
		}
	}
	if tlsScheme(u.Scheme) && tlsSecretRef(hc.TLSConfig) == "" {
		if pr.TLS, err = commoncfg.NewTLSConfig(&hc.TLSConfig); err != nil {
			v.errorf(rp.to("tls_config"), "%v", err)
		} else if pr.TLS.ServerName == "" {
			pr.TLS.ServerName = u.Hostname()
		}
	}
	pr.Header = headerSet(r.Headers, t, pr.Authorization)
	if r.GRPC != nil {
		pr.GRPC = compileGRPC(r.GRPC, parts)
		pr.Templated = !literal(pr.GRPC.Message)
		for _, f := range pr.GRPC.Metadata {
			pr.Templated = pr.Templated || !literal(f.Value)
		}
	}
	return pr
}

// literal reports a template that writes a fixed text.
func literal(t *template.Template) bool {
	_, ok := t.Literal()
	return ok
}

// tlsScheme reports the schemes of a connection over TLS.
func tlsScheme(scheme string) bool { return scheme == "https" || scheme == "wss" || scheme == "grpcs" }

// netHTTPSetting names the setting for which a request must go through
// net/http, or "" when the lean clients can send it. Authentication that
// resolves to a fixed header (basic_auth, authorization, bearer_token, with
// their *_file variants) is resolved once, for the lean clients; only
// secret-manager references need net/http.
func netHTTPSetting(hc commoncfg.HTTPClientConfig) string {
	switch {
	case tlsSecretRef(hc.TLSConfig) != "":
		return tlsSecretRef(hc.TLSConfig)
	case hc.ProxyURL.URL != nil || hc.ProxyFromEnvironment:
		return "proxy"
	case hc.OAuth2 != nil:
		return "oauth2"
	case hc.FollowRedirects:
		return "follow_redirects"
	case hc.HTTPHeaders != nil && len(hc.HTTPHeaders.Headers) > 0:
		return "http_headers"
	case hc.BasicAuth != nil && (hc.BasicAuth.UsernameRef != "" || hc.BasicAuth.PasswordRef != ""):
		return "basic_auth secret reference"
	case hc.Authorization != nil && hc.Authorization.CredentialsRef != "":
		return "authorization secret reference"
	}
	return ""
}

// tlsSecretRef names the tls_config setting that reads a secret manager,
// which only net/http's path is given; "" when there is none.
func tlsSecretRef(t commoncfg.TLSConfig) string {
	switch {
	case t.CARef != "":
		return "tls_config ca_ref"
	case t.CertRef != "":
		return "tls_config cert_ref"
	case t.KeyRef != "":
		return "tls_config key_ref"
	}
	return ""
}

// requestTarget is the template of the request target: the URL's
// template without its scheme and host, which a template cannot stand in.
func requestTarget(whole *template.Template, u *url.URL) *template.Template {
	rest := strings.TrimPrefix(whole.Prefix(), u.Scheme+"://"+u.Host)
	var start string
	if !strings.HasPrefix(rest, "/") {
		start = "/"
	}
	return template.Concat(template.Text(start+rest), whole.Rest())
}

// headerSet decides the headers of a request, for every client (the lean
// ones, net/http, WebSocket): the configured headers (their templates, or
// fixed texts), and a User-Agent and an Authorization unless they are
// among them. auth is the Authorization value the credentials resolve to,
// or "" when there are none or when the client's own round tripper adds
// them (net/http): a header set in headers wins either way, as in
// prometheus/common.
func headerSet(headers map[string]string, t *requestTemplates, auth string) plan.Header {
	configured := make(map[string]*template.Template, len(headers))
	for k, value := range headers {
		h := template.Text(value)
		if t != nil {
			h = t.Headers[k]
		}
		configured[textproto.CanonicalMIMEHeaderKey(k)] = h
	}
	var hs plan.Header
	hs.Host = configured["Host"]
	delete(configured, "Host")
	if _, ok := configured["User-Agent"]; !ok {
		hs.Fields = append(hs.Fields, plan.Field{Name: "User-Agent", Value: template.Text(userAgent())})
	}
	if _, ok := configured["Authorization"]; !ok && auth != "" {
		hs.Fields = append(hs.Fields, plan.Field{Name: "Authorization", Value: template.Text(auth)})
	}
	for _, k := range slices.Sorted(maps.Keys(configured)) {
		hs.Fields = append(hs.Fields, plan.Field{Name: k, Value: configured[k]})
	}
	return hs
}

// userAgent is the User-Agent of every request unless headers set one.
func userAgent() string {
	v := version.Version
	if v == "" {
		v = "unknown"
	}
	return "loadprobe/" + v
}

// staticAuthorization resolves the configured credentials to the value of an
// Authorization header, read once (files included), or "" when there are none.
// It follows prometheus/common: credentials and usernames are taken as read
// from files with surrounding space trimmed, and the type defaults to Bearer.
func staticAuthorization(hc commoncfg.HTTPClientConfig) (string, error) {
	read := func(inline commoncfg.Secret, file string) (string, error) {
		if file != "" {
			return commoncfg.NewFileSecret(file).Fetch(context.Background())
		}
		return string(inline), nil
	}
	switch {
	case hc.BasicAuth != nil:
		user, err := read(commoncfg.Secret(hc.BasicAuth.Username), hc.BasicAuth.UsernameFile)
		if err != nil {
			return "", fmt.Errorf("basic_auth username: %w", err)
		}
		pass, err := read(hc.BasicAuth.Password, hc.BasicAuth.PasswordFile)
		if err != nil {
			return "", fmt.Errorf("basic_auth password: %w", err)
		}
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)), nil
	case hc.Authorization != nil:
		typ := strings.TrimSpace(hc.Authorization.Type)
		if typ == "" {
			typ = "Bearer"
		}
		cred, err := read(hc.Authorization.Credentials, hc.Authorization.CredentialsFile)
		if err != nil {
			return "", fmt.Errorf("authorization credentials: %w", err)
		}
		return typ + " " + cred, nil
	case hc.BearerToken != "" || hc.BearerTokenFile != "":
		cred, err := read(hc.BearerToken, hc.BearerTokenFile)
		if err != nil {
			return "", fmt.Errorf("bearer_token: %w", err)
		}
		return "Bearer " + cred, nil
	}
	return "", nil
}

// pinProxy resolves once the proxy that pc gives for u, with ProxyFor,
// the function the allowlist check asks, and writes it back into pc as a
// fixed proxy_url, or as none. net/http then uses the proxy that was
// checked, rather than a resolution of its own (it reads the environment
// once per process). A request reaches one host, so one answer serves all
// its attempts (docs/security.md, "Security").
func pinProxy(pc *commoncfg.ProxyConfig, u *url.URL) error {
	proxy, err := ProxyFor(pc, u)
	if err != nil {
		return fmt.Errorf("proxy for %s: %w", u.Host, err)
	}
	header := pc.ProxyConnectHeader
	*pc = commoncfg.ProxyConfig{}
	if proxy != nil {
		pc.ProxyURL = commoncfg.URL{URL: proxy}
		pc.ProxyConnectHeader = header
	}
	return nil
}

// pinProxies pins the proxy of the request's URL u and the one of its
// OAuth2 token endpoint, in hc, a copy of the config's settings.
func pinProxies(hc *commoncfg.HTTPClientConfig, u *url.URL) error {
	if err := pinProxy(&hc.ProxyConfig, u); err != nil {
		return err
	}
	if hc.OAuth2 == nil {
		return nil
	}
	o := *hc.OAuth2
	token, err := url.Parse(o.TokenURL)
	if err != nil {
		return fmt.Errorf("oauth2.token_url: %w", err)
	}
	if err := pinProxy(&o.ProxyConfig, token); err != nil {
		return fmt.Errorf("oauth2: %w", err)
	}
	hc.OAuth2 = &o
	return nil
}

// compileGRPC builds the plan of a gRPC call from its section and what
// validation read of it: the message and metadata as templates (fixed
// texts unless they vary per call), the descriptor set.
func compileGRPC(g *GRPC, parts *requestParts) *plan.GRPC {
	pg := &plan.GRPC{Method: g.Method, Health: g.Health, Descriptors: parts.set, Connections: g.Connections,
		Message: template.Text(g.Message), Stream: compileStream(g.Stream)}
	if g.Health != nil {
		pg.Method = plan.HealthMethod
		pg.Message = template.Text(fmt.Sprintf(`{"service": %q}`, *g.Health))
	}
	t := parts.grpc
	if t != nil && g.Health == nil {
		pg.Message = t.Message
	}
	for _, k := range slices.Sorted(maps.Keys(g.Metadata)) {
		value := template.Text(g.Metadata[k])
		if t != nil {
			value = t.Metadata[k]
		}
		pg.Metadata = append(pg.Metadata, plan.Field{Name: k, Value: value})
	}
	return pg
}
