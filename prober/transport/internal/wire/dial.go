package wire

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"time"
)

// invalidHost reports a name under .invalid, which RFC 6761 reserves to never
// resolve; the client answers it without asking a resolver.
func invalidHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "invalid" || strings.HasSuffix(host, ".invalid")
}

// Dial opens a TCP connection to addr, failing at deadline (zero: no limit
// beyond ctx's).
func Dial(ctx context.Context, addr string, deadline time.Time) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if invalidHost(host) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{
			Err: "no such host", Name: host, IsNotFound: true,
		}}
	}
	d := net.Dialer{Deadline: deadline}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil && OutOfFiles(err) {
		// The next dial would fail as fast: wait before the worker tries
		// again, rather than spin through failed dials.
		backOff(ctx, deadline)
	}
	return c, err
}

// outOfFilesBackoff is how long a dial that found no free file descriptor
// waits before it returns (docs/measurement.md, "The generator's own limits").
const outOfFilesBackoff = 50 * time.Millisecond

// backOff waits outOfFilesBackoff, or until ctx ends or deadline passes.
func backOff(ctx context.Context, deadline time.Time) {
	wait := outOfFilesBackoff
	if !deadline.IsZero() {
		wait = min(wait, time.Until(deadline))
	}
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// OpenConn dials addr, with deadline set on the connection, which conns
// tracks, and runs the TLS handshake over it when cfg is set; nc is the
// connection to use, raw the TCP one under it. Both lean clients and the
// gRPC client open their connections so.
func OpenConn(ctx context.Context, addr string, cfg *tls.Config, deadline time.Time, conns *ConnSet[net.Conn]) (nc, raw net.Conn, err error) {
	raw, err = Dial(ctx, addr, deadline)
	if err != nil {
		return nil, nil, err
	}
	if err := raw.SetDeadline(deadline); err != nil {
		raw.Close()
		return nil, nil, err
	}
	conns.Add(raw)
	if cfg == nil {
		return raw, raw, nil
	}
	tc, err := Handshake(ctx, raw, cfg)
	if err != nil {
		conns.Remove(raw)
		raw.Close()
		return nil, nil, err
	}
	return tc, raw, nil
}

// Handshake runs the client side of a TLS handshake over nc, by the
// deadline already set on nc, or until ctx ends (the client's Abort).
func Handshake(ctx context.Context, nc net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return tc, nil
}

// WithALPN is a copy of the request's TLS configuration that offers protos
// by ALPN.
func WithALPN(cfg *tls.Config, protos []string) *tls.Config {
	cfg = cfg.Clone()
	cfg.NextProtos = protos
	return cfg
}
