// Package h3 sends a probe's requests over HTTP/3 (docs/http3.md): quic-go's
// http3.Transport under net/http's request and response types, which
// package std writes and reads as for any round tripper. Each Conn has a
// QUIC connection of its own, on a UDP socket of its own, or shares one of
// plan.Request.HTTP3Connections with the other Conns, its streams theirs.
package h3

import (
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/prober/transport/std"
	"github.com/loadprobe/loadprobe/result"
)

// New builds the HTTP/3 client of req, a request of the probe name. It
// does not dial.
func New(req *plan.Request, name string) (*std.Client, error) {
	tlsConfig := req.TLS.Clone()
	tlsConfig.NextProtos = []string{http3.NextProtoH3}
	transport := func() *http3.Transport {
		return &http3.Transport{
			TLSClientConfig:        tlsConfig,
			QUICConfig:             &quic.Config{},
			MaxResponseHeaderBytes: wire.MaxHeaderBytes,
			// A load probe measures the bytes the server sends, as the
			// other paths do: net/http's own asks for gzip only when the
			// request does not.
			DisableCompression: true,
		}
	}
	take := func() (http.RoundTripper, bool) { return transport(), true }
	if n := req.HTTP3Connections; n > 0 {
		shared := make([]*http3.Transport, n)
		for i := range shared {
			shared[i] = transport()
		}
		var next atomic.Uint64
		take = func() (http.RoundTripper, bool) { return shared[(next.Add(1)-1)%uint64(n)], false }
	}
	return std.Over(req, name, take, Classify)
}

// Classify names the failure of an HTTP/3 attempt (docs/http3.md): a
// failed handshake is tls, a stream reset or a connection the server
// closed or reset is reset, an H3 or QUIC protocol error other; the rest
// (deadlines, refusals the kernel reports) as on every path.
func Classify(err error) result.Outcome {
	var (
		transportErr *quic.TransportError
		h3Err        *http3.Error
	)
	switch {
	case errors.As(err, &transportErr) && transportErr.ErrorCode.IsCryptoError():
		return result.TLS
	case errors.As(err, new(*quic.StreamError)), errors.As(err, new(*quic.StatelessResetError)):
		return result.Reset
	case errors.As(err, &h3Err):
		if h3Err.ErrorCode == http3.ErrCodeRequestRejected || h3Err.ErrorCode == http3.ErrCodeRequestCanceled || h3Err.ErrorCode == http3.ErrCodeNoError {
			return result.Reset
		}
		return result.Other
	case errors.As(err, new(*quic.ApplicationError)):
		return result.Reset
	case errors.As(err, new(*quic.VersionNegotiationError)):
		return result.Other
	case errors.As(err, &transportErr) && transportErr.ErrorCode == quic.ConnectionRefused:
		return result.Refused
	case errors.As(err, &transportErr):
		return result.Other
	}
	return wire.Classify(err)
}
