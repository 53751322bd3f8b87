package config

import (
	"strings"
	"testing"
)

// HTTP/3 takes an https URL and none of the settings only net/http sends.
func TestHTTP3Settings(t *testing.T) {
	probe := func(request string) string {
		return "allowed_targets: [\"127.0.0.1\"]\nprobes:\n  - name: p\n    request: {" + request + "}\n    load: {concurrency: [1]}\n"
	}
	for _, c := range []struct{ request, want string }{
		{`url: "http://127.0.0.1/", http3: true`, "request.http3: HTTP/3 runs over QUIC with TLS: the URL must be https (got http)"},
		{`url: "https://127.0.0.1/", http3: true, proxy_url: "http://127.0.0.1:3128"`, "request.http3: HTTP/3 is sent by quic-go, which does not take proxy"},
		{`url: "https://127.0.0.1/", http3_connections: 2`, "request.http3_connections: set without http3: true"},
		{`url: "https://127.0.0.1/", http3: true, http3_connections: -1`, "request.http3_connections: must be in [0, 4096] (got -1)"},
	} {
		_, err := Parse("x.yml", []byte(probe(c.request)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.request, err, c.want)
		}
	}
	cfg, err := Parse("x.yml", []byte(probe(`url: "https://127.0.0.1:8443/", http3: true, http3_connections: 3`)))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Plans()[0].Request; !r.HTTP3 || r.HTTP3Connections != 3 {
		t.Errorf("http3 %v, connections %d", r.HTTP3, r.HTTP3Connections)
	}
}
