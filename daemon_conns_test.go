package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// scrapeWebConfig asks for basic auth: scrape:scrape-secret (bcrypt, cost 4).
const scrapeWebConfig = `basic_auth_users:
  scrape: $2a$04$QtSyqMg9gy.ULigx4U2DzeSaYpOKw.H6p5lYZ8lsBhq/FpfVwSgCK
`

// TestIdleConnectionsCannotStarveMetrics holds 1 020 idle keep-alive
// connections to a daemon whose file descriptors are limited to 1 024 (as
// `ulimit -n 1024` does), each after one answered request: a 200, or the
// 401 of a client without credentials. Every scrape still answers, and the
// daemon holds its connections below its bound, not one per client.
// Unbounded, the idle connections took every descriptor and 0 of 5
// scrapes answered.
func TestIdleConnectionsCannotStarveMetrics(t *testing.T) {
	for name, webConfig := range map[string]string{"answered 200": "", "answered 401": scrapeWebConfig} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "loadprobe.yml")
			testkit.WriteFile(t, file, "allowed_targets: [\"127.0.0.1\"]\nprobes: []\n")
			args := []string{"--config.file=" + file, "--web.listen-address=127.0.0.1:0"}
			if webConfig != "" {
				web := filepath.Join(dir, "web.yml")
				testkit.WriteFile(t, web, webConfig)
				args = append(args, "--web.config.file="+web)
			}
			d := startDaemon(t, exec.Command("sh", append([]string{"-c", `ulimit -n 1024 && exec "$@"`, "sh", binary}, args...)...))
			addr := strings.TrimPrefix(d.base, "http://")

			idle := holdIdleConnections(t, addr, 1020)
			wantStatus := map[string]int{"": 200, scrapeWebConfig: 401}[webConfig]
			for _, status := range idle {
				if status != wantStatus {
					t.Fatalf("an idle connection's request was answered %d, want %d", status, wantStatus)
				}
			}

			client := &http.Client{Timeout: 5 * time.Second}
			for i := range 5 {
				req, _ := http.NewRequest(http.MethodGet, d.base+"/metrics", nil)
				req.SetBasicAuth("scrape", "scrape-secret")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("scrape %d beside %d idle connections: %v", i+1, len(idle), err)
				}
				var body strings.Builder
				bufio.NewReader(resp.Body).WriteTo(&body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("scrape %d: %d", i+1, resp.StatusCode)
				}
				if fds := testkit.MetricValue(t, body.String(), "process_open_fds"); fds > 200 {
					t.Errorf("scrape %d: the daemon holds %.0f descriptors beside %d idle clients, want its bound (128 connections) and a few", i+1, fds, len(idle))
				}
			}
		})
	}
}

// holdIdleConnections opens n keep-alive connections to addr, sends one
// request on each and reads its answer's status, and leaves them open until
// the test ends. The connect and the answer may wait on a full server for
// a moment, not more.
func holdIdleConnections(t *testing.T, addr string, n int) []int {
	t.Helper()
	statuses := make([]int, 0, n)
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /-/healthy HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d: no answer within 5s: %v", i+1, err)
		}
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	return statuses
}
