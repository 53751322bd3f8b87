package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/config"
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
// targets' fixed addresses (two HTTP, one gRPC, one HTTP/3), and the demo
// puts its own in their place.
func TestDemoWritesItsTargetsIntoTheConfig(t *testing.T) {
	got := demoHosts(demoConfig, "127.0.0.1:40001", "127.0.0.2:40002", "127.0.0.2:40003", "127.0.0.2:40004")
	testkit.Lacks(t, "the demo's config", got, ":8080")
	testkit.Lacks(t, "the demo's config", got, ":50051")
	testkit.Lacks(t, "the demo's config", got, ":8443")
	if strings.Count(got, "127.0.0.1:40001/") < 4 || strings.Count(got, "127.0.0.2:40002/") < 3 {
		t.Errorf("the demo's config does not send its ramps to the first target and its WebSocket and flow probes to the second:\n%s", got)
	}
	if !strings.Contains(got, "grpc://127.0.0.2:40003") {
		t.Errorf("the demo's config does not send its gRPC ramp to the gRPC service:\n%s", got)
	}
	if !strings.Contains(got, "https://127.0.0.2:40004/work") {
		t.Errorf("the demo's config does not send its HTTP/3 ramp to the HTTP/3 target:\n%s", got)
	}
}

// TestDemoTelemetry: the demo's work probe reads its target's Prometheus
// when the demo names one, and the demo leaves the telemetry out without
// one; either way the config loads with every probe.
func TestDemoTelemetry(t *testing.T) {
	for _, url := range []string{"", "http://127.0.0.9:19090"} {
		text, err := demoTelemetry(demoHosts(demoConfig, "127.0.0.1:40001", "127.0.0.2:40002", "127.0.0.2:40003", "127.0.0.2:40004"), url)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse("demo.yml", []byte(text))
		if err != nil {
			t.Fatalf("--demo.prometheus-url=%q: %v\n%s", url, err, text)
		}
		if n, want := len(cfg.Probes), strings.Count(demoConfig, "\n  - name:"); n != want {
			t.Errorf("--demo.prometheus-url=%q: %d probes, want %d", url, n, want)
		}
		work, _ := cfg.Plan("work")
		switch tel := work.Telemetry; {
		case url == "" && tel != nil:
			t.Errorf("without a Prometheus the demo's work reads telemetry from %s", tel.Prometheus.URL)
		case url != "" && (tel == nil || tel.Prometheus.URL != url || len(tel.Saturation) != 1 || tel.Traffic == ""):
			t.Errorf("with --demo.prometheus-url=%s the demo's work reads %+v", url, tel)
		}
	}
}
