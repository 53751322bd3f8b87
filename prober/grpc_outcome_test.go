package prober

import (
	"net"
	"os"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loadprobe/loadprobe/result"
)

// The statuses grpc-go makes itself for a connection that failed count by
// the reason, as an HTTP request's would; a status the server sent is the
// server's answer.
func TestTransportOutcome(t *testing.T) {
	refused := error(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	for _, tc := range []struct {
		name    string
		st      *status.Status
		dialErr *error
		want    result.Outcome
		local   bool
	}{
		{"write on a closed connection", status.New(codes.Unavailable, "write tcp 127.0.0.1:43382->127.0.0.1:37593: write: broken pipe"), nil, result.Reset, true},
		{"read of a reset connection", status.New(codes.Unavailable, "error reading from server: read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"), nil, result.Reset, true},
		{"failed dial", status.New(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused\""), &refused, result.Refused, true},
		{"the server's own UNAVAILABLE", status.New(codes.Unavailable, "overloaded: shedding"), nil, 0, false},
		{"another code with a transport text", status.New(codes.NotFound, "broken pipe"), nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, local := transportOutcome(tc.st, tc.dialErr)
			if o != tc.want || local != tc.local {
				t.Errorf("transportOutcome(%v) = %v, %v; want %v, %v", tc.st, o, local, tc.want, tc.local)
			}
		})
	}
}
