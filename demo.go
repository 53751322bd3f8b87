package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/demo/target"
)

//go:embed examples/demo.yml
var demoConfig string

// runDemo is `loadprobe demo`: the demo target on a free loopback port and
// the daemon probing it with the embedded demo config, until SIGINT or
// SIGTERM; with prometheusURL, its telemetry reads that Prometheus.
func runDemo(g *daemonFlags, prometheusURL string, logger *slog.Logger, stdout io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Two demo targets on two loopback hosts: the ramps of the
	// breaking points on one, the WebSocket and flow probes on the other,
	// so that the scheduler (one run per host at a time) shows the first
	// knee within seconds whichever probe it starts first. The gRPC
	// service and HTTP/3 beside the second, each with a worker pool of its
	// own.
	var addrs [4]net.Addr
	var dones []chan error
	for i, side := range []struct {
		listen string
		serve  serveFunc
	}{{"127.0.0.1:0", target.Serve}, {"127.0.0.2:0", target.Serve}, {"127.0.0.2:0", target.ServeGRPC}, {"127.0.0.2:0", target.ServeH3}} {
		addr, done, err := startTarget(ctx, side.listen, side.serve, logger)
		if err != nil {
			logger.Error("Demo target failed", "err", err)
			return 1
		}
		addrs[i], dones = addr, append(dones, done)
	}
	targets, grpcAddr, h3Addr := [2]net.Addr{addrs[0], addrs[1]}, addrs[2], addrs[3]
	first := targets[0]

	dir, err := os.MkdirTemp("", "loadprobe-demo-")
	if err != nil {
		logger.Error("Cannot write the demo config", "err", err)
		return 1
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "demo.yml")
	config, err := demoTelemetry(demoHosts(demoConfig, targets[0].String(), targets[1].String(), grpcAddr.String(), h3Addr.String()), prometheusURL)
	if err == nil {
		err = os.WriteFile(file, []byte(config), 0o600)
	}
	if err != nil {
		logger.Error("Cannot write the demo config", "err", err)
		return 1
	}

	d, err := g.newDaemon(file, logger)
	if err != nil {
		logger.Error("Error setting up", "err", err)
		return 1
	}
	daemonDone := make(chan error, 1)
	go func() { daemonDone <- d.Run(ctx) }()
	select {
	case <-d.Started():
	case err := <-daemonDone:
		logger.Error("Error running loadprobe", "err", err)
		return 1
	}
	base := "http://" + hostPort(d.Addrs())
	fmt.Fprintf(stdout, `loadprobe demo is running; Ctrl-C stops it.
  demo target:    http://%s/  (config: %s)
  gRPC service:   grpc://%s  (loadprobe.demo.v1.Target)
  HTTP/3:         https://%s/  (UDP, self-signed)
  status page:    %s/
  metrics:        %s/metrics
  results (JSON): %s/api/v1/results
  listening on:   %s
The first breaking points show within about 20 seconds.
`, first, file, grpcAddr, h3Addr, base, base, base, reach(d.Addrs()))
	demoTelemetryHint(stdout, prometheusURL, targets)

	err = <-daemonDone
	stop() // the daemon may have ended on its own: the targets go too
	for _, done := range dones {
		<-done
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		logger.Error("Error running loadprobe", "err", err)
		return 1
	}
	return 0
}

// demoHosts writes the demo targets' addresses into the demo config for
// the fixed ones it names: 127.0.0.1:8080 (`loadprobe target`'s default),
// 127.0.0.2:8080, the gRPC service's 127.0.0.2:50051 and HTTP/3's
// 127.0.0.2:8443.
func demoHosts(config, first, second, grpc, h3 string) string {
	return strings.NewReplacer("127.0.0.1:8080", first, "127.0.0.2:8080", second, "127.0.0.2:50051", grpc, "127.0.0.2:8443", h3).Replace(config)
}

// demoPrometheus is the Prometheus the demo config's telemetry names.
const demoPrometheus = "http://localhost:9090"

// demoTelemetry points the demo config's telemetry at the Prometheus at
// url, or without one leaves the telemetry out: a Prometheus that does not
// answer would leave a line in every diagnosis.
func demoTelemetry(config, url string) (string, error) {
	if url != "" {
		return strings.ReplaceAll(config, demoPrometheus, url), nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(config), &doc); err != nil {
		return "", err
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "probes" {
			continue
		}
		for _, probe := range root.Content[i+1].Content {
			for j := 0; j+1 < len(probe.Content); j += 2 {
				if probe.Content[j].Value == "telemetry" {
					probe.Content = slices.Delete(probe.Content, j, j+2)
					break
				}
			}
		}
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	return b.String(), enc.Close()
}

// demoTelemetryHint says where the demo's telemetry reads, or without a
// Prometheus how to see it.
func demoTelemetryHint(w io.Writer, prometheusURL string, targets [2]net.Addr) {
	if prometheusURL != "" {
		fmt.Fprintf(w, "Headroom and the bottleneck of work: read from %s, which must scrape http://%s/metrics.\n", prometheusURL, targets[0])
		return
	}
	fmt.Fprintf(w, `Headroom and the bottleneck: start the demo with --demo.prometheus-url=URL of a
Prometheus that scrapes the targets' own metrics, http://%s/metrics and
http://%s/metrics, every second or so (docs/telemetry.md).
`, targets[0], targets[1])
}

// serveFunc serves a demo target: target.Serve, ServeGRPC or ServeH3.
type serveFunc func(ctx context.Context, addr string, opts target.Options, logger *slog.Logger, ready func(net.Addr)) error

// startTarget serves a demo target with serve on listen until ctx ends;
// done receives serve's error when it has stopped.
func startTarget(ctx context.Context, listen string, serve serveFunc, logger *slog.Logger) (net.Addr, chan error, error) {
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, listen, target.Options{}, logger, func(a net.Addr) { addr <- a })
	}()
	select {
	case a := <-addr:
		return a, done, nil
	case err := <-done:
		return nil, nil, err
	}
}

// reach says who can open the daemon's addresses: loopback only (the
// demo's default), or other hosts too, to whom the endpoints are then open
// (docs/security.md).
func reach(addrs []net.Addr) string {
	names := make([]string, len(addrs))
	loopback := len(addrs) > 0
	for i, a := range addrs {
		names[i] = a.String()
		tcp, ok := a.(*net.TCPAddr)
		loopback = loopback && ok && tcp.IP.IsLoopback()
	}
	list := strings.Join(names, ", ")
	if loopback {
		return list + ", loopback only (--web.listen-address=:10471 opens it to other hosts)"
	}
	return list + ", reachable from other hosts (--web.listen-address=127.0.0.1:10471 keeps it to this one)"
}

// hostPort is the first listen address as a browser would open it: an
// unspecified host (":10471") becomes localhost.
func hostPort(addrs []net.Addr) string {
	if len(addrs) == 0 {
		return "localhost:10471"
	}
	tcp, ok := addrs[0].(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		_, port, _ := net.SplitHostPort(addrs[0].String())
		return net.JoinHostPort("localhost", port)
	}
	return tcp.String()
}
