package prober

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/textproto"
	"slices"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/version"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/config/template"
)

// headerSet is the header section of every attempt of a request, decided
// here for every client (the lean one, net/http, WebSocket): the
// configured headers, each a template (a fixed text unless the request is
// templated), and a User-Agent and an Authorization unless they are among
// them. Host is apart: each client puts it where its protocol wants it.
type headerSet struct {
	host   *template.Template // the configured Host header; nil: the URL's host
	fields []headerField      // in the order the lean client writes them
}

type headerField struct {
	name  string // canonical, as net/http sends it
	value *template.Template
}

// newHeaderSet decides the headers of req. auth is the Authorization value
// the credentials resolve to (staticAuthorization), or "" when there are
// none or when the client's own round tripper adds them (net/http, for
// secret references and OAuth2): a header set in headers wins either way,
// as in prometheus/common.
func newHeaderSet(req config.Request, auth string) headerSet {
	configured := make(map[string]*template.Template, len(req.Headers))
	for k, v := range req.Headers {
		h := template.Text(v)
		if req.Templates != nil {
			h = req.Templates.Headers[k]
		}
		configured[textproto.CanonicalMIMEHeaderKey(k)] = h
	}
	var hs headerSet
	hs.host = configured["Host"]
	delete(configured, "Host")
	if _, ok := configured["User-Agent"]; !ok {
		hs.fields = append(hs.fields, headerField{"User-Agent", template.Text(userAgent())})
	}
	if _, ok := configured["Authorization"]; !ok && auth != "" {
		hs.fields = append(hs.fields, headerField{"Authorization", template.Text(auth)})
	}
	for _, k := range slices.Sorted(maps.Keys(configured)) {
		hs.fields = append(hs.fields, headerField{k, configured[k]})
	}
	return hs
}

// has reports whether the request sends the header name (canonical).
func (hs headerSet) has(name string) bool {
	return slices.ContainsFunc(hs.fields, func(f headerField) bool { return f.name == name })
}

// literal splits the headers into those that write a fixed text, set in
// fixed, and those that vary per attempt, returned.
func (hs headerSet) literal(fixed http.Header) (varying []headerField) {
	for _, f := range hs.fields {
		if v, ok := f.value.Literal(); ok {
			fixed.Set(f.name, v)
		} else {
			varying = append(varying, f)
		}
	}
	return varying
}

// render sets the headers that vary with v's values.
func render(h http.Header, varying []headerField, v *template.Vars) {
	for _, f := range varying {
		h.Set(f.name, string(f.value.Append(nil, v)))
	}
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
// A file that changes during the run is read again by the next run's client.
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
		return basicAuth(user, pass), nil
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

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}
