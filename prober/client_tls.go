package prober

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/loadprobe/loadprobe/plan"
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
// (client_h2.go); http/1.1 only otherwise.

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
	return withALPN(req.TLS, protos)
}

// withALPN is a copy of the request's TLS configuration that offers protos
// by ALPN.
func withALPN(cfg *tls.Config, protos []string) *tls.Config {
	cfg = cfg.Clone()
	cfg.NextProtos = protos
	return cfg
}

// handshake runs the client side of a TLS handshake over nc, by the
// deadline already set on nc, or until ctx ends (the client's Abort).
func handshake(ctx context.Context, nc net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return tc, nil
}
