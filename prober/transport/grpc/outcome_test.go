package grpc

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/loadprobe/loadprobe/prober/transport/h2"
	"github.com/loadprobe/loadprobe/result"
)

// A response is read as grpc-go reads it: the HTTP status first, by gRPC's
// table, then grpc-status; a server's DEADLINE_EXCEEDED near the client's
// deadline is the client's timeout; a health check's reply is decoded.
func TestGRPCOutcome(t *testing.T) {
	ok := func(st uint32) h2.Response {
		return h2.Response{Status: 200, GRPC: h2.GRPC{ContentType: true, EndedByFields: true, HasStatus: true, Status: st}}
	}
	health := func(body ...byte) h2.Response { r := ok(0); r.Body = body; return r }
	noStatus := ok(0)
	noStatus.GRPC.HasStatus = false
	noTrailers := ok(0)
	noTrailers.GRPC.EndedByFields, noTrailers.GRPC.HasStatus = false, false
	grpc503 := ok(14)
	grpc503.Status = 503
	soon, late := time.Now().Add(time.Millisecond), time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name     string
		resp     h2.Response
		health   bool
		deadline time.Time
		code     result.Code
		want     result.Outcome
	}{
		{"OK", ok(0), false, late, result.GRPCStatus(0), result.Success},
		{"UNAVAILABLE", ok(14), false, late, result.GRPCStatus(14), result.HTTPError},
		{"RESOURCE_EXHAUSTED", ok(8), false, late, result.GRPCStatus(8), result.HTTPError},
		{"a status past the known ones is UNKNOWN", ok(99), false, late, result.GRPCStatus(2), result.HTTPError},
		{"trailers without grpc-status are UNKNOWN", noStatus, false, late, result.GRPCStatus(2), result.HTTPError},
		{"no trailers is INTERNAL", noTrailers, false, late, result.GRPCStatus(13), result.HTTPError},
		{"a gRPC response's HTTP status is not read", grpc503, false, late, result.GRPCStatus(14), result.HTTPError},
		{"HTTP 503 is UNAVAILABLE", h2.Response{Status: 503}, false, late, result.GRPCStatus(14), result.HTTPError},
		{"HTTP 404 is UNIMPLEMENTED", h2.Response{Status: 404}, false, late, result.GRPCStatus(12), result.HTTPError},
		{"HTTP 200 without gRPC's content type is UNKNOWN", h2.Response{Status: 200}, false, late, result.GRPCStatus(2), result.HTTPError},
		{"the server's DEADLINE_EXCEEDED at the deadline", ok(4), false, soon, result.Code{}, result.Timeout},
		{"the server's DEADLINE_EXCEEDED long before it", ok(4), false, late, result.GRPCStatus(4), result.HTTPError},
		{"SERVING", health(0, 0, 0, 0, 2, 8, 1), true, late, result.GRPCStatus(0), result.Success},
		{"NOT_SERVING", health(0, 0, 0, 0, 2, 8, 2), true, late, result.GRPCNotServing, result.HTTPError},
		{"status unset", health(0, 0, 0, 0, 0), true, late, result.GRPCServingUnknown, result.HTTPError},
		{"a reply cut short", health(0, 0, 0, 0, 9, 8, 1), true, late, result.GRPCStatus(13), result.HTTPError},
		{"a compressed reply", health(1, 0, 0, 0, 2, 8, 1), true, late, result.GRPCStatus(13), result.HTTPError},
		{"no reply", health(), true, late, result.GRPCStatus(13), result.HTTPError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{health: tc.health, timeout: time.Second}
			code, o := c.outcome(tc.resp, tc.deadline)
			if code != tc.code || o != tc.want {
				t.Errorf("outcome = %s %v; want %s %v", code.String(), o, tc.code.String(), tc.want)
			}
		})
	}
}

// A call without an answer counts by the reason; a reset after the server
// asked for a client certificate the probe has none of is the handshake's.
func TestGRPCFailure(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	soon := time.Now().Add(time.Millisecond)
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, tc := range []struct {
		name      string
		err       error
		certAsked bool
		want      result.Outcome
	}{
		{"refused", refused, false, result.Refused},
		{"reset", reset, false, result.Reset},
		{"a stream reset", h2.StreamError{StreamID: 1, Code: http2.ErrCodeInternal, FromPeer: true}, false, result.Reset},
		{"the deadline", os.ErrDeadlineExceeded, false, result.Timeout},
		{"reset after a certificate request", reset, true, result.TLS},
		{"refused after a certificate request", refused, true, result.Refused},
		{"closed by Abort", net.ErrClosed, false, result.Other},
		{"reset by the server at the deadline", h2.StreamError{StreamID: 1, Code: http2.ErrCodeCancel, FromPeer: true}, false, result.Timeout},
		{"the server's TLS alert", errors.New("remote error: tls: certificate required"), false, result.TLS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{timeout: time.Second}
			c.certAsked.Store(tc.certAsked)
			if got := c.failure(tc.err, soon); got != tc.want {
				t.Errorf("failure(%v) = %v; want %v", tc.err, got, tc.want)
			}
		})
	}
}

// grpc-timeout carries the deadline in at most eight digits, rounded up.
func TestGRPCTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second:                        "1000000u",
		50 * time.Millisecond:              "50000000n",
		100 * time.Millisecond:             "100000u",
		1500 * time.Nanosecond:             "1500n",
		100 * time.Second:                  "100000m",
		200000 * time.Second:               "200000S",
		2000 * time.Hour:                   "7200000S",
		2000000 * time.Hour:                "2000000H",
		200000*time.Hour + time.Second:     "12000001M",
		time.Millisecond + time.Nanosecond: "1000001n",
	} {
		if got := grpcTimeout(d); got != want {
			t.Errorf("grpcTimeout(%v) = %q; want %q", d, got, want)
		}
	}
}
