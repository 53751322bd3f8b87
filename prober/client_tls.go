package prober

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"

	commoncfg "github.com/prometheus/common/config"
)

// https on the fast path: crypto/tls under the lean HTTP/1.1 client. The
// TLS configuration is prometheus/common's, built from tls_config by
// NewTLSConfig as net/http's path builds it, so every setting means the
// same on both paths: ca/ca_file, cert/cert_file and key/key_file (client
// certificates, read at each handshake, as prometheus/common does),
// server_name, insecure_skip_verify, min_version and max_version. The
// server name defaults to the URL's host, as in net/http. ALPN offers h2
// and http/1.1 when enable_http2 (the default) allows HTTP/2, and the
// server's choice decides which of the lean clients takes the connection
// (client_h2.go); http/1.1 only otherwise.

// fastTLSConfig returns the TLS configuration of an https URL on the fast
// path, or nil for http.
func fastTLSConfig(hc commoncfg.HTTPClientConfig, u *url.URL) (*tls.Config, error) {
	if u.Scheme != "https" {
		return nil, nil
	}
	protos := []string{"http/1.1"}
	if hc.EnableHTTP2 {
		protos = []string{"h2", "http/1.1"}
	}
	return clientTLS(hc, u, protos)
}

// clientTLS is the TLS configuration of tls_config for a connection to u's
// host that offers protos by ALPN.
func clientTLS(hc commoncfg.HTTPClientConfig, u *url.URL, protos []string) (*tls.Config, error) {
	cfg, err := commoncfg.NewTLSConfig(&hc.TLSConfig)
	if err != nil {
		return nil, fmt.Errorf("tls_config: %w", err)
	}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	cfg.NextProtos = protos
	return cfg, nil
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

// handshake runs the client side of a TLS handshake over nc, by the
// deadline already set on nc, or until ctx ends (the client's Abort).
func handshake(ctx context.Context, nc net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return tc, nil
}
