package collector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/result"
)

const wsExposition = `
# HELP loadprobe_websocket_close_codes_total Close frames WebSocket servers sent during an attempt (outcome closed), by close code (1013: try again later).
# TYPE loadprobe_websocket_close_codes_total counter
loadprobe_websocket_close_codes_total{code="1013",probe="ws"} 2
# HELP loadprobe_websocket_handshakes_total WebSocket sessions opened or refused, by how the handshake ended (success, http_error: the upgrade refused, timeout, refused, reset, tls, dns, other, generator: out of file descriptors). A session the server closed is opened again for the next attempt, and counted again.
# TYPE loadprobe_websocket_handshakes_total counter
loadprobe_websocket_handshakes_total{outcome="dns",probe="ws"} 0
loadprobe_websocket_handshakes_total{outcome="generator",probe="ws"} 0
loadprobe_websocket_handshakes_total{outcome="http_error",probe="ws"} 1
loadprobe_websocket_handshakes_total{outcome="other",probe="ws"} 0
loadprobe_websocket_handshakes_total{outcome="refused",probe="ws"} 0
loadprobe_websocket_handshakes_total{outcome="reset",probe="ws"} 0
loadprobe_websocket_handshakes_total{outcome="success",probe="ws"} 3
loadprobe_websocket_handshakes_total{outcome="timeout",probe="ws"} 0
loadprobe_websocket_handshakes_total{outcome="tls",probe="ws"} 0
`

var wsFamilyNames = []string{
	"loadprobe_websocket_handshakes_total", "loadprobe_websocket_close_codes_total",
	"loadprobe_websocket_handshake_duration_seconds",
}

// WebSocket probes get their handshakes (every outcome from the first, at
// 0) and close codes; an HTTP probe shows none of these families.
func TestWebSocketLive(t *testing.T) {
	reg, _, c := newTest(t)
	c.Live("http").Attempt(result.Success, result.HTTPStatus(200), 0.01)
	ws := c.Live("ws").(*Live)
	for _, s := range []float64{0.001, 0.002, 0.004} {
		ws.Handshake(result.Success, s)
	}
	ws.Handshake(result.HTTPError, 0.001) // timed only when a session opened
	ws.CloseCode(1013)
	ws.CloseCode(1013)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(wsExposition), wsFamilyNames[:2]...); err != nil {
		t.Fatal(err)
	}
	if got := testutil.CollectAndCount(c.ws.duration); got != 1 {
		t.Errorf("handshake duration: %d series, want one for probe ws", got)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == wsFamilyNames[2] {
			if n := mf.Metric[0].GetHistogram().GetSampleCount(); n != 3 {
				t.Errorf("handshake duration counts %d handshakes, want the 3 that opened a session", n)
			}
		}
	}
	problems, err := testutil.GatherAndLint(reg, wsFamilyNames...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	c.Forget("ws")
	for _, name := range wsFamilyNames {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
			t.Errorf("%s: %d series after the probe was forgotten, %v; want none", name, n, err)
		}
	}
}
