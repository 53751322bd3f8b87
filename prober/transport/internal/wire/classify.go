package wire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/loadprobe/loadprobe/result"
)

// ErrUnprocessed is an HTTP/2 request the server did not process: its
// stream was above a GOAWAY's last stream, or refused (REFUSED_STREAM), or
// the connection was going away before it was sent. It can be sent again,
// on a new connection, whatever its method (RFC 9113, 8.7).
var ErrUnprocessed = errors.New("http2: request not processed by the server (GOAWAY or REFUSED_STREAM)")

// Classify maps the error that ended an attempt to its Outcome. Both client
// implementations use it, so one condition gets one reason whichever path
// sent the request. It runs only on failures, so it may look at error text
// where the standard library offers no type.
//
// The order matters: the client's own deadline wins over whatever the
// deadline interrupted (a DNS lookup, a TLS handshake, a read), and
// a specific cause wins over the generic timeout flag of net.Error.
func Classify(err error) result.Outcome {
	if err == nil {
		return result.Other
	}
	if OutOfFiles(err) {
		return result.Generator
	}
	if errors.Is(err, ErrTooLarge) {
		return result.TooLarge
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return result.Timeout
	}
	if errors.As(err, new(*net.DNSError)) {
		return result.DNS
	}
	if isTLSError(err) {
		return result.TLS
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return result.Refused
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, ErrUnprocessed) ||
		errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return result.Reset
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return result.Timeout
	}
	msg := err.Error()
	for _, s := range resetMessages {
		if strings.Contains(msg, s) {
			return result.Reset
		}
	}
	return result.Other
}

// resetMessages are errors of net/http (and its bundled HTTP/2) that mean the
// peer closed or abandoned the connection before a response, and that have no
// exported type to test for.
var resetMessages = []string{
	"server closed idle connection", // net/http: errServerClosedIdle
	"connection reset by peer",      // text of a wrapped ECONNRESET that lost its type
	"broken pipe",                   // likewise EPIPE
	"server sent GOAWAY",            // HTTP/2 GOAWAY
	"stream error",                  // HTTP/2 RST_STREAM
	"client connection lost",        // HTTP/2 connection lost
	"http2: client connection force closed via ClientConn.Close",
}

// isTLSError reports a failed handshake: an alert from either side, a
// record that is not TLS, or a certificate that did not verify.
func isTLSError(err error) bool {
	var (
		alert    tls.AlertError
		record   tls.RecordHeaderError
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		roots    x509.SystemRootsError
		ech      *tls.ECHRejectionError
	)
	switch {
	case errors.As(err, &alert), errors.As(err, &record), errors.As(err, &verify),
		errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &roots), errors.As(err, &ech):
		return true
	}
	// Locally raised alerts ("local error: tls: ...") and handshake errors
	// ("tls: ...") are unexported types or plain strings.
	msg := err.Error()
	return strings.Contains(msg, "tls: ") || strings.Contains(msg, "x509: ") ||
		strings.Contains(msg, "server gave HTTP response to HTTPS client")
}

// OutOfFiles reports that the process, or the system, ran out of file
// descriptors: the generator's limit, not the target's failure.
func OutOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
