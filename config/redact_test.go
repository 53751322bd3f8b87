package config

import (
	"strings"
	"testing"
)

// /config hides every secret: what prometheus/common marks secret, and the
// values of headers, endpoint parameters and query parameters whose names
// are not known to be harmless, among them names that carry no keyword
// at all: a secret may hide under any name, so only the harmless ones show.
func TestRedacted(t *testing.T) {
	in := `allowed_targets: [127.0.0.1]
probes:
  - name: basic
    request:
      url: http://127.0.0.1:8080/work?api_key=k3y&page=2&Session_ID=s3ss&scope=read
      headers:
        Accept: application/json
        User-Agent: loadprobe-test
        Authorization: Bearer h34der
        Cookie: c00kie
        X-Api-Key: x4pi
        X-Auth-Token: t0ken
        Proxy-Authorization: Basic pr0xy
        X-Vault-Tkn: v4ult
        X-Csrf: csrfv4lue
      http_headers:
        X-Tenant-Pin: {values: [p1n]}
        Accept-Language: {values: [en-GB]}
        X-Hidden: {secrets: [h1dden]}
      basic_auth: {username: prober, password: p4ssword}
    load: {concurrency: [1]}
  - name: authz
    request:
      url: http://127.0.0.1:8080/work
      authorization: {type: Bearer, credentials: cr3dentials}
    load: {concurrency: [1]}
  - name: bearer
    request:
      url: http://127.0.0.1:8080/work
      bearer_token: b3arer
    load: {concurrency: [1]}
  - name: oauth
    request:
      url: http://127.0.0.1:8080/work
      oauth2:
        client_id: prober
        client_secret: cl13nt
        token_url: http://127.0.0.1:8080/token?tenant=t3nant&scope=read
        endpoint_params: {assertion: 4ssertion, grant_type: client_credentials}
    load: {concurrency: [1]}
`
	c, err := Parse("x.yml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range []string{"k3y", "s3ss", "h34der", "c00kie", "x4pi", "t0ken", "pr0xy", "v4ult", "csrfv4lue",
		"p1n", "h1dden", "p4ssword", "cr3dentials", "b3arer", "cl13nt", "t3nant", "4ssertion", "page=2"} {
		if strings.Contains(s, secret) {
			t.Errorf("redacted config shows %q:\n%s", secret, s)
		}
	}
	for _, want := range []string{
		"url: http://127.0.0.1:8080/work?api_key=<secret>&page=<secret>&Session_ID=<secret>&scope=read",
		"token_url: http://127.0.0.1:8080/token?tenant=<secret>&scope=read",
		"Accept: application/json",
		"User-Agent: loadprobe-test",
		"X-Vault-Tkn: <secret>",
		"X-Csrf: <secret>",
		"Authorization: <secret>",
		"- en-GB",
		"assertion: <secret>",
		"grant_type: client_credentials",
		"password: <secret>",
		"credentials: <secret>",
		"client_secret: <secret>",
		"username: prober",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("redacted config lacks %q:\n%s", want, s)
		}
	}
	if c.String() != s {
		t.Errorf("String() differs from Redacted()")
	}
	// The config itself keeps its secrets.
	r := c.Probes[0].Request
	if r.Headers["X-Vault-Tkn"] != "v4ult" || !strings.Contains(r.URL, "k3y") ||
		r.HTTPClientConfig.HTTPHeaders.Headers["X-Tenant-Pin"].Values[0] != "p1n" ||
		c.Probes[3].Request.HTTPClientConfig.OAuth2.EndpointParams["assertion"] != "4ssertion" {
		t.Errorf("Redacted changed the config: %+v", r)
	}
	// What /config shows is a config loadprobe accepts.
	if _, err := Parse("x.yml", out); err != nil {
		t.Errorf("the redacted config does not parse: %v", err)
	}
}
