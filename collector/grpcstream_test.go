package collector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/result"
)

const streamExposition = `
# HELP loadprobe_grpc_stream_ends_total gRPC streams that ended before their step did, by how: the status the server ended it with (OK, UNAVAILABLE…) or the failure that ended it (timeout: a message unanswered within the timeout; reset…).
# TYPE loadprobe_grpc_stream_ends_total counter
loadprobe_grpc_stream_ends_total{end="OK",probe="s"} 1
loadprobe_grpc_stream_ends_total{end="UNAVAILABLE",probe="s"} 2
loadprobe_grpc_stream_ends_total{end="timeout",probe="s"} 1
# HELP loadprobe_grpc_streams_total gRPC streams opened (success) or not, by outcome (timeout, refused, reset, tls, dns, other, generator: out of file descriptors). A stream that ended early is opened again, and counted again.
# TYPE loadprobe_grpc_streams_total counter
loadprobe_grpc_streams_total{outcome="dns",probe="s"} 0
loadprobe_grpc_streams_total{outcome="generator",probe="s"} 0
loadprobe_grpc_streams_total{outcome="other",probe="s"} 0
loadprobe_grpc_streams_total{outcome="refused",probe="s"} 1
loadprobe_grpc_streams_total{outcome="reset",probe="s"} 0
loadprobe_grpc_streams_total{outcome="success",probe="s"} 4
loadprobe_grpc_streams_total{outcome="timeout",probe="s"} 0
loadprobe_grpc_streams_total{outcome="tls",probe="s"} 0
`

var streamFamilyNames = []string{"loadprobe_grpc_streams_total", "loadprobe_grpc_stream_ends_total"}

// A gRPC stream probe gets its streams opened (every outcome from the
// first, at 0) and how those that ended early ended, a server's status by
// its name; another probe shows none of these families, and a forgotten
// probe loses them.
func TestGRPCStreamLive(t *testing.T) {
	reg, _, c := newTest(t)
	c.Live("http").Attempt(result.Success, result.HTTPStatus(200), 0.01)
	s := c.Live("s").(*Live)
	for range 4 {
		s.StreamOpened(result.Success)
	}
	s.StreamOpened(result.Refused)
	s.StreamEnded(result.HTTPError, result.GRPCStatus(14))
	s.StreamEnded(result.HTTPError, result.GRPCStatus(14))
	s.StreamEnded(result.Closed, result.GRPCStatus(0))
	s.StreamEnded(result.Timeout, result.Code{})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(streamExposition), streamFamilyNames...); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg, streamFamilyNames...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	c.Forget("s")
	for _, name := range streamFamilyNames {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
			t.Errorf("%s: %d series after the probe was forgotten, %v; want none", name, n, err)
		}
	}
}
