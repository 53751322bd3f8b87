package h1

import (
	"crypto/tls"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// https on the fast path: crypto/tls under the lean HTTP/1.1 client. The
// TLS configuration is prometheus/common's, built from tls_config by
// NewTLSConfig when the config loads (plan.Request.TLS), as net/http's
// path builds it, so every setting means the same on both paths:
// ca/ca_file, cert/cert_file and key/key_file (client certificates, read
// at each handshake, as prometheus/common does), server_name, insecure_skip_verify, min_version and max_version. The
// server name defaults to the URL's host, as in net/http. ALPN offers h2
// and http/1.1 when enable_http2 (the default) allows HTTP/2, and the
// server's choice decides which of the lean clients takes the connection
// (h2.go); http/1.1 only otherwise.

// fastTLSConfig returns the TLS configuration of an https request on the
// fast path, or nil for http.
func fastTLSConfig(req *plan.Request) *tls.Config {
	if req.URL.Scheme != "https" {
		return nil
	}
	protos := []string{"http/1.1"}
	if req.HTTP2 {
		protos = []string{"h2", "http/1.1"}
	}
	return wire.WithALPN(req.TLS, protos)
}
