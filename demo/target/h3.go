package target

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// ServeH3 serves a new demo target over HTTP/3 on the UDP address addr
// (docs/http3.md) until ctx is done, as Serve does over TCP. Its
// certificate is self-signed, made at start: a probe of it sets
// tls_config.insecure_skip_verify.
func ServeH3(ctx context.Context, addr string, opts Options, logger *slog.Logger, ready func(net.Addr)) error {
	return ServeHandlerH3(ctx, addr, New(opts), logger, func(a net.Addr, _ *x509.Certificate) {
		if ready != nil {
			ready(a)
		}
	})
}

// ServeHandlerH3 is ServeH3 for any handler (a test's server), whose ready
// also gets the certificate, self-signed for the loopback names, that a
// client may trust.
func ServeHandlerH3(ctx context.Context, addr string, h http.Handler, logger *slog.Logger, ready func(net.Addr, *x509.Certificate)) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := checkTargetAddr(addr); err != nil {
		return err
	}
	cert, err := LoopbackCertificate()
	if err != nil {
		return fmt.Errorf("demo target: %w", err)
	}
	pc, err := new(net.ListenConfig).ListenPacket(ctx, "udp", addr)
	if err != nil {
		return fmt.Errorf("demo target: %w", err)
	}
	srv := &http3.Server{
		Handler:   h,
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}),
	}
	logger.Info("Demo target serving HTTP/3", "address", pc.LocalAddr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(pc) }()
	if ready != nil {
		ready(pc.LocalAddr(), cert.Leaf)
	}
	select {
	case err := <-served:
		pc.Close()
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), targetShutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdown)
	srv.Close()
	pc.Close()
	if err != nil && shutdown.Err() == nil {
		return err
	}
	return nil
}

// LoopbackCertificate is a self-signed certificate for 127.0.0.1, ::1 and
// localhost, valid for a day, its Leaf parsed.
func LoopbackCertificate() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "loadprobe demo target"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
