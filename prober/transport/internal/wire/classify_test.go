package wire

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

	"github.com/loadprobe/loadprobe/result"
)

func TestClassify(t *testing.T) {
	op := func(op string, err error) error {
		return &net.OpError{Op: op, Net: "tcp", Err: err}
	}
	sys := func(call string, errno syscall.Errno) error { return os.NewSyscallError(call, errno) }
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://127.0.0.1/", Err: err} }
	for _, tc := range []struct {
		err  error
		want result.Outcome
	}{
		{op("read", os.ErrDeadlineExceeded), result.Timeout},
		{urlErr(context.DeadlineExceeded), result.Timeout},
		{op("dial", &net.DNSError{Err: "i/o timeout", IsTimeout: true, UnwrapErr: context.DeadlineExceeded}), result.Timeout},
		{op("dial", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}), result.DNS},
		{urlErr(op("dial", &net.DNSError{Err: "server misbehaving", Name: "x"})), result.DNS},
		{op("dial", sys("connect", syscall.ECONNREFUSED)), result.Refused},
		{urlErr(op("dial", sys("connect", syscall.ECONNREFUSED))), result.Refused},
		{op("read", sys("read", syscall.ECONNRESET)), result.Reset},
		{op("write", sys("write", syscall.EPIPE)), result.Reset},
		{io.EOF, result.Reset},
		{urlErr(io.EOF), result.Reset},
		{io.ErrUnexpectedEOF, result.Reset},
		{fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", io.EOF), result.Reset},
		{fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", errors.New(`malformed HTTP response "HELLO"`)), result.Other},
		{errors.New("http: server closed idle connection"), result.Reset},
		{urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), result.TLS},
		{x509.HostnameError{Certificate: &x509.Certificate{}, Host: "h"}, result.TLS},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, result.TLS},
		{op("remote error", tls.AlertError(40)), result.TLS},
		{errors.New("tls: handshake failure"), result.TLS},
		{errors.New(`http: server gave HTTP response to HTTPS client`), result.TLS},
		{errors.New("malformed HTTP status line"), result.Other},
		{errors.New(`malformed HTTP response "HELLO"`), result.Other},
		{op("dial", sys("connect", syscall.ENETUNREACH)), result.Other},
		{nil, result.Other},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
