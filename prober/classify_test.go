package prober

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	op := func(op string, err error) error {
		return &net.OpError{Op: op, Net: "tcp", Err: err}
	}
	sys := func(call string, errno syscall.Errno) error { return os.NewSyscallError(call, errno) }
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://127.0.0.1/", Err: err} }
	for _, tc := range []struct {
		err  error
		want Outcome
	}{
		{op("read", os.ErrDeadlineExceeded), Timeout},
		{urlErr(context.DeadlineExceeded), Timeout},
		{op("dial", &net.DNSError{Err: "i/o timeout", IsTimeout: true, UnwrapErr: context.DeadlineExceeded}), Timeout},
		{op("dial", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}), DNS},
		{urlErr(op("dial", &net.DNSError{Err: "server misbehaving", Name: "x"})), DNS},
		{op("dial", sys("connect", syscall.ECONNREFUSED)), Refused},
		{urlErr(op("dial", sys("connect", syscall.ECONNREFUSED))), Refused},
		{op("read", sys("read", syscall.ECONNRESET)), Reset},
		{op("write", sys("write", syscall.EPIPE)), Reset},
		{io.EOF, Reset},
		{urlErr(io.EOF), Reset},
		{io.ErrUnexpectedEOF, Reset},
		{fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", io.EOF), Reset},
		{fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", errors.New(`malformed HTTP response "HELLO"`)), Other},
		{errors.New("http: server closed idle connection"), Reset},
		{urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), TLS},
		{x509.HostnameError{Certificate: &x509.Certificate{}, Host: "h"}, TLS},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, TLS},
		{op("remote error", tls.AlertError(40)), TLS},
		{errors.New("tls: handshake failure"), TLS},
		{errors.New(`http: server gave HTTP response to HTTPS client`), TLS},
		{errMalformedStatus, Other},
		{errors.New(`malformed HTTP response "HELLO"`), Other},
		{op("dial", sys("connect", syscall.ENETUNREACH)), Other},
		{nil, Other},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
