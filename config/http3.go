package config

import (
	"net/url"
)

// maxHTTP3Connections bounds http3_connections, as max_concurrency bounds
// the workers that would each hold one.
const maxHTTP3Connections = 4096

// http3 checks r's HTTP/3 settings at p (docs/http3.md): an https URL of an
// HTTP request, and none of the settings only net/http sends, whose
// transport HTTP/3 does not use; rawURL is the URL as its templates check
// it.
func (v *validator) http3(r *Request, rawURL string, p keyPath) {
	if !r.HTTP3 {
		if r.HTTP3Connections != 0 {
			v.errorf(p.to("http3_connections"), "set without http3: true")
		}
		return
	}
	hp := p.to("http3")
	if u, err := url.Parse(rawURL); err == nil && u.Scheme != "https" {
		v.errorf(hp, "HTTP/3 runs over QUIC with TLS: the URL must be https (got %s)", u.Scheme)
	}
	if r.GRPC != nil {
		v.errorf(hp, "a gRPC call runs over HTTP/2, not HTTP/3")
	}
	if s := netHTTPSetting(r.HTTPClientConfig); s != "" {
		v.errorf(hp, "HTTP/3 is sent by quic-go, which does not take %s", s)
	}
	if n := r.HTTP3Connections; n < 0 || n > maxHTTP3Connections {
		v.errorf(p.to("http3_connections"), "must be in [0, %d] (got %d); 0 is one a worker", maxHTTP3Connections, n)
	}
}
