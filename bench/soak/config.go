package main

import (
	"fmt"
	"net"
	"strings"
)

// probeKinds are the loads the soak mixes, one of each in turn: every path
// that opens connections or goroutines per run (closed and open loop,
// failures, timeouts, flows, WebSocket sessions, a continuous canary). Levels
// stay small: the soak looks for leaks, not for capacity, on a shared
// machine. HOST is replaced by a target's address.
var probeKinds = []struct{ name, yaml string }{
	{"ramp", `request: {url: "http://HOST/work", timeout: 1s}
    load: {concurrency: [1, 2, 4], step_duration: 1s}`},
	{"flaky", `request: {url: "http://HOST/flaky"}
    load: {rate: [50, 100], step_duration: 1s}`},
	{"timeout", `request: {url: "http://HOST/delay?ms=200", timeout: 50ms}
    load: {concurrency: [1, 2], step_duration: 1s}`},
	{"flow", `flow:
      - name: login
        request: {method: POST, url: "http://HOST/login", body: '{"user": "user{{index}}"}'}
        capture: {token: {json: token}}
      - name: item
        request:
          url: "http://HOST/items/{{random_int 1 5000}}"
          headers: {Authorization: "Bearer {{.token}}"}
        think: 5ms
    load: {concurrency: [1, 2], step_duration: 1s}`},
	{"ws", `request: {url: "ws://HOST/ws", body: '{"op":"ping"}'}
    load: {rate: [50, 100], sessions: 2, step_duration: 1s}`},
	{"canary", `request: {url: "http://HOST/noop"}
    load: {rate: [5], step_duration: 2s}`},
}

// soakConfig is the daemon's config: n probes of the kinds above in turn,
// each kind spread over the targets, every probe but the canaries run
// every interval (the canaries back to back).
func soakConfig(n int, targets []string, interval string) string {
	var b strings.Builder
	b.WriteString("allowed_targets: [")
	for i, t := range targets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(hostOf(t))
	}
	b.WriteString("]\nprobes:\n")
	for i := range n {
		kind := probeKinds[i%len(probeKinds)]
		target := targets[(i/len(probeKinds))%len(targets)]
		schedule := "{interval: " + interval + "}"
		if kind.name == "canary" {
			schedule = "{continuous: true}"
		}
		fmt.Fprintf(&b, "  - name: %s-%d\n    %s\n    schedule: %s\n",
			kind.name, i, strings.ReplaceAll(kind.yaml, "HOST", target), schedule)
	}
	return b.String()
}

// hostOf is the host of a host:port address.
func hostOf(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	return host
}
