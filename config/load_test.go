package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
)

// A probe that is valid but for what a test changes.
const validProbe = `allowed_targets: ["127.0.0.1", "*.staging.example.com"]
probes:
  - name: work
    request:
      url: http://api.staging.example.com/work
%s    load:
      concurrency: [1, 2]
`

// Files that are not regular are refused at once, never read: a config,
// or a body_file, that is a device, a FIFO or a link to one.
func TestLoadRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/dev/zero", fifo, zero} {
		if _, err := LoadFile(name); err == nil || err.Error() != "cannot read "+name+": not a regular file" {
			t.Errorf("LoadFile(%s): got %v, want that it is not a regular file", name, err)
		}
		cfg := filepath.Join(dir, "body.yml")
		body := fmt.Sprintf("      body_file: %s\n", name)
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf(validProbe, body)), 0o600); err != nil {
			t.Fatal(err)
		}
		want := cfg + ":6: probes[0].request.body_file: cannot read " + name + ": not a regular file"
		if _, err := LoadFile(cfg); err == nil || err.Error() != want {
			t.Errorf("body_file %s:\n got: %v\nwant: %s", name, err, want)
		}
	}
}

// Every file the client settings name is read at load: a missing one is
// an error with its line and key, not a failure of the first run.
func TestLoadChecksEveryNamedFile(t *testing.T) {
	for _, tc := range []struct{ yaml, key string }{
		{"      tls_config: {ca_file: nope}\n", "tls_config.ca_file"},
		{"      tls_config: {cert_file: nope, key_file: ../password.txt}\n", "tls_config.cert_file"},
		{"      tls_config: {cert_file: ../ca.pem, key_file: nope}\n", "tls_config.key_file"},
		{"      basic_auth: {username: u, password_file: nope}\n", "basic_auth.password_file"},
		{"      authorization: {credentials_file: nope}\n", "authorization.credentials_file"},
		{"      bearer_token_file: nope\n", "bearer_token_file"},
		{"      oauth2: {client_id: a, client_secret_file: nope, token_url: 'http://127.0.0.1/t'}\n", "oauth2.client_secret_file"},
		{"      http_headers: {X-Token: {files: [nope]}}\n", "http_headers.X-Token.files[0]"},
	} {
		_, err := Parse("testdata/bad/x.yml", []byte(fmt.Sprintf(validProbe, tc.yaml)))
		want := "testdata/bad/x.yml:6: probes[0].request." + tc.key + ": cannot read testdata/bad/nope: no such file or directory"
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got: %v\nwant: %s", strings.TrimSpace(tc.yaml), err, want)
		}
	}
}

// A proxy taken from the environment is resolved at load, as net/http
// resolves it for the probe's URL, and must be allowed.
func TestLoadChecksTheEnvironmentsProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://proxy.attacker.example:3128")
	t.Setenv("NO_PROXY", "")
	in := fmt.Sprintf(validProbe, "      proxy_from_environment: true\n")
	want := "x.yml:6: probes[0].request.proxy_from_environment: the environment's proxy host \"proxy.attacker.example\" is not in allowed_targets"
	if _, err := Parse("x.yml", []byte(in)); err == nil || err.Error() != want {
		t.Errorf("\n got: %v\nwant: %s", err, want)
	}
	t.Setenv("HTTP_PROXY", "http://proxy.staging.example.com:3128")
	if _, err := Parse("x.yml", []byte(in)); err != nil {
		t.Errorf("an allowed proxy: %v", err)
	}
	t.Setenv("NO_PROXY", "api.staging.example.com")
	t.Setenv("HTTP_PROXY", "http://proxy.attacker.example:3128")
	if _, err := Parse("x.yml", []byte(in)); err != nil {
		t.Errorf("a URL the environment does not proxy: %v", err)
	}
}

// The rules always hold their values after a load: a section left out,
// null or empty takes the defaults, so no reader needs a default of its own.
func TestRulesAlwaysFilled(t *testing.T) {
	for _, rules := range []string{"", "    rules:\n", "    rules: ~\n", "    rules: {}\n", "    rules: {error_ratio_budget: 0.1}\n"} {
		c, err := Parse("x.yml", []byte(fmt.Sprintf(validProbe, "")+rules))
		if err != nil {
			t.Fatalf("%q: %v", rules, err)
		}
		r := c.Probes[0].Rules
		if r.KneeFraction != plan.DefaultRules.KneeFraction || r.LatencyQuantile != plan.DefaultRules.LatencyQuantile || r.LatencyBudget != plan.DefaultRules.LatencyBudget {
			t.Errorf("%q: rules %+v, want the defaults %+v", rules, r, plan.DefaultRules)
		}
	}
}

// Request prints and round-trips as itself, not as its client settings.
func TestRequestPrintsAndRoundTrips(t *testing.T) {
	c, err := Parse("x.yml", []byte(fmt.Sprintf(validProbe, "      method: POST\n")))
	if err != nil {
		t.Fatal(err)
	}
	req := c.Probes[0].Request
	if s := fmt.Sprint(req); !strings.Contains(s, "http://api.staging.example.com/work") || !strings.Contains(s, "POST") {
		t.Errorf("fmt.Sprint(req) = %s: no URL or method", s)
	}
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back Request
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.URL != req.URL || back.Method != "POST" || back.Timeout != req.Timeout || !back.KeepAlive {
		t.Errorf("JSON round trip: got %+v from %s", back, data)
	}
}

// Merge keys that repeat each other ten times over, seven deep, would make
// the decoder visit 10^7 mappings: the walk stops at a bound set by the
// document's size and says why.
func TestParseStopsAnAliasBomb(t *testing.T) {
	anchors, prev := "  a: &a {name: x}\n", "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		anchors += "  " + n + ": &" + n + " {<<: [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]}\n"
		prev = n
	}
	in := "x:\n" + anchors + "allowed_targets: [a]\nprobes:\n  - <<: *h\n"
	_, err := Parse("x.yml", []byte(in))
	want := "x.yml:1: unknown key \"x\"\nx.yml:2: aliases expand the document too far"
	if err == nil || err.Error() != want {
		t.Errorf("\n got: %v\nwant: %s", err, want)
	}
}

// A Host header's host is checked as the URL's: without its port, an IPv6
// literal without brackets.
func TestHostHeaderIsAllowedLikeAURLHost(t *testing.T) {
	for value, ok := range map[string]bool{
		"api.staging.example.com":       true,
		"API.staging.example.com:8443":  true,
		"127.0.0.1":                     true,
		"[::1]:8080":                    true,
		"a.b.staging.example.com":       false,
		"127.0.0.1.attacker.example:80": false,
	} {
		in := fmt.Sprintf(strings.Replace(validProbe, `"127.0.0.1"`, `"127.0.0.1", "::1"`, 1), "      headers: {Host: '"+value+"'}\n")
		if _, err := Parse("x.yml", []byte(in)); (err == nil) != ok {
			t.Errorf("Host: %s: got %v, want allowed %t", value, err, ok)
		}
	}
}

// BenchmarkParseManyProbes validates a config of 10 000 probes, which must
// take well under a second: validation is linear in the number of probes
// (TestConfigCheckLinearInProbes, at the root, checks the shape).
func BenchmarkParseManyProbes(b *testing.B) {
	data := []byte(testkit.ManyProbes(10000))
	for b.Loop() {
		if _, err := Parse("many.yml", data); err != nil {
			b.Fatal(err)
		}
	}
}
