package prober

import (
	"fmt"
	"testing"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/fleet"
)

// A level's connections: a closed loop's level, an open loop's requests in
// flight within their timeout (at most max_in_flight, and at most a
// WebSocket probe's sessions), one per flow step; a gRPC probe's
// grpc.connections.
func TestMostConnections(t *testing.T) {
	for _, tc := range []struct {
		body        string
		level       float64
		connections uint64
	}{
		{"request: {url: 'http://127.0.0.1/', timeout: 1s}\n    load: {concurrency: [10, 20, 300]}", 300, 300},
		{"request: {url: 'http://127.0.0.1/', timeout: 2s}\n    load: {rate: [10, 100]}", 100, 200},
		{"request: {url: 'http://127.0.0.1/', timeout: 5s}\n    load: {rate: [1000], max_in_flight: 700}", 1000, 700},
		{"request: {url: 'http://127.0.0.1/', timeout: 1s}\n    load: {search: {concurrency: {from: 1, max: 900}}}", 900, 900},
		{"request: {url: 'ws://127.0.0.1/', timeout: 2s}\n    load: {rate: [1000], sessions: 50}", 1000, 50},
		{"request: {url: 'grpc://127.0.0.1:1', grpc: {method: a.B/C, connections: 4}}\n    load: {concurrency: [2000]}", 2000, 4},
		{"request: {url: 'grpc://127.0.0.1:1', grpc: {method: a.B/C}}\n    load: {rate: [5000]}", 5000, 1},
		{"flow:\n      - {name: a, request: {url: 'http://127.0.0.1/a'}}\n      - {name: b, request: {url: 'http://127.0.0.1/b'}}\n    load: {concurrency: [50]}", 50, 100},
	} {
		cfg, err := config.Parse("x.yml", []byte(fmt.Sprintf("allowed_targets: [\"127.0.0.1\"]\nprobes:\n  - name: p\n    %s\n", tc.body)))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		level, conns := mostConnections(cfg.Plans()[0], fleet.Shard{})
		if level != tc.level || conns != tc.connections {
			t.Errorf("%s: level %v, %d connections; want %v, %d", tc.body, level, conns, tc.level, tc.connections)
		}
	}
}
