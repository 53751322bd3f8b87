package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// TestEveryExampleChecks: each config of examples/ passes --config.check as
// it is, the demo's included, so that a user can start from any of them.
func TestEveryExampleChecks(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join("examples", "*.yml"))
	if err != nil || len(examples) < 3 {
		t.Fatalf("%d configs in examples/ (%v), want at least 3", len(examples), err)
	}
	for _, example := range examples {
		code, stdout, stderr := loadprobe(t, "--config.check", "--config.file="+example)
		if code != 0 {
			t.Errorf("--config.check on %s: exit %d, want 0\n%s%s", example, code, stdout, stderr)
		}
		testkit.Contains(t, "--config.check on "+example, stdout, example+" is valid: ")
	}
}

// TestDemoWritesItsTargetsIntoTheConfig: the demo's config names the
// targets' fixed addresses (two HTTP, one gRPC), and the demo puts its own
// in their place.
func TestDemoWritesItsTargetsIntoTheConfig(t *testing.T) {
	got := demoHosts(demoConfig, "127.0.0.1:40001", "127.0.0.2:40002", "127.0.0.2:40003")
	testkit.Lacks(t, "the demo's config", got, ":8080")
	testkit.Lacks(t, "the demo's config", got, ":50051")
	if strings.Count(got, "127.0.0.1:40001/") < 4 || strings.Count(got, "127.0.0.2:40002/") < 3 {
		t.Errorf("the demo's config does not send its ramps to the first target and its WebSocket and flow probes to the second:\n%s", got)
	}
	if !strings.Contains(got, "grpc://127.0.0.2:40003") {
		t.Errorf("the demo's config does not send its gRPC ramp to the gRPC service:\n%s", got)
	}
}
