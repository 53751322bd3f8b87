package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// connectCounter is a proxy on 127.0.0.2, a loopback host that the configs
// below do not list: it counts the requests it is sent (a WebSocket dialer
// sends CONNECT) and refuses each.
func connectCounter(t *testing.T) (addr string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	addr = serveConns(t, "127.0.0.2:0", func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			requests.Add(1)
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		}
	})
	return addr, requests
}

// TestWebSocketProxyFromEnvironmentIsChecked: a WebSocket probe with
// proxy_from_environment, whose environment names a proxy outside
// allowed_targets, is rejected by --config.check as the same probe over
// http is, and `run` sends nothing through that proxy.
func TestWebSocketProxyFromEnvironmentIsChecked(t *testing.T) {
	proxy, requests := connectCounter(t)
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		t.Setenv(name, "http://"+proxy)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	for _, scheme := range []string{"ws", "wss", "http"} {
		t.Run(scheme, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "loadprobe.yml")
			// target.test is not a loopback name, so the environment's
			// proxy applies to it.
			testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["target.test"]
probes:
  - name: ws
    request: {url: "%s://target.test:8080/ws", timeout: 200ms, proxy_from_environment: true}
    load: {concurrency: [1], step_duration: 1s}
`, scheme))
			want := `loadprobe.yml:4: probes[0].request.proxy_from_environment: the environment's proxy host "127.0.0.2" is not in allowed_targets`
			code, _, stderr := loadprobe(t, "--config.check", "--config.file="+file)
			if code != 1 || !strings.Contains(stderr, want) {
				t.Errorf("--config.check: exit %d, stderr %q; want 1 and %q", code, stderr, want)
			}
			code, _, stderr = loadprobe(t, "run", "--config.file="+file)
			if code == 0 || requests.Load() != 0 {
				t.Errorf("run: exit %d, %d requests through the unlisted proxy; want a config error and none\n%s", code, requests.Load(), stderr)
			}
		})
	}
}
