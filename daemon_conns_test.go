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

// TestIdleOrSlowClientsCannotStarveMetrics holds 1 020 connections to a
// daemon whose file descriptors are limited to 1 024 (as `ulimit -n 1024`
// does): idle keep-alive ones, each after one answered request (a 200, or
// the 401 of a client without credentials), or slow ones that send a
// request header without its end. Every scrape still answers, and the
// daemon holds its connections below its bound, not one per client.
// Unbounded, the idle connections took every descriptor and 0 of 5 scrapes
// answered; bounded without making room, the slow ones kept a scrape
// waiting for their header timeouts.
func TestIdleOrSlowClientsCannotStarveMetrics(t *testing.T) {
	for name, tc := range map[string]struct {
		webConfig string
		hold      func(t *testing.T, addr string, n int)
	}{
		"idle, answered 200": {"", holdIdleConnections(200)},
		"idle, answered 401": {scrapeWebConfig, holdIdleConnections(401)},
		"slow headers":       {"", holdSlowConnections},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "loadprobe.yml")
			testkit.WriteFile(t, file, "allowed_targets: [\"127.0.0.1\"]\nprobes: []\n")
			args := []string{"--config.file=" + file, "--web.listen-address=127.0.0.1:0"}
			if tc.webConfig != "" {
				web := filepath.Join(dir, "web.yml")
				testkit.WriteFile(t, web, tc.webConfig)
				args = append(args, "--web.config.file="+web)
			}
			d := startDaemon(t, exec.Command("sh", append([]string{"-c", `ulimit -n 1024 && exec "$@"`, "sh", binary}, args...)...))
			const clients = 1020
			tc.hold(t, strings.TrimPrefix(d.base, "http://"), clients)

			client := &http.Client{Timeout: 5 * time.Second}
			for i := range 5 {
				req, _ := http.NewRequest(http.MethodGet, d.base+"/metrics", nil)
				req.SetBasicAuth("scrape", "scrape-secret")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("scrape %d beside %d clients: %v", i+1, clients, err)
				}
				var body strings.Builder
				bufio.NewReader(resp.Body).WriteTo(&body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("scrape %d: %d", i+1, resp.StatusCode)
				}
				if fds := testkit.MetricValue(t, body.String(), "process_open_fds"); fds > 200 {
					t.Errorf("scrape %d: the daemon holds %.0f descriptors beside %d clients, want its bound (128 connections) and a few", i+1, fds, clients)
				}
			}
		})
	}
}

// holdIdleConnections returns a client that opens n keep-alive
// connections to addr, sends one request on each and reads its answer,
// whose status must be status, and leaves them open until the test ends.
// The connect and the answer may wait on a full server for a moment, not
// more.
func holdIdleConnections(status int) func(t *testing.T, addr string, n int) {
	return func(t *testing.T, addr string, n int) {
		t.Helper()
		for i := range n {
			c := dialHeld(t, addr)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "GET /-/healthy HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("connection %d: no answer within 5s: %v", i+1, err)
			}
			resp.Body.Close()
			if resp.StatusCode != status {
				t.Fatalf("connection %d: its request was answered %d, want %d", i+1, resp.StatusCode, status)
			}
		}
	}
}

// holdSlowConnections opens n connections to addr and sends on each a
// request header without the blank line that ends it.
func holdSlowConnections(t *testing.T, addr string, n int) {
	t.Helper()
	for range n {
		fmt.Fprintf(dialHeld(t, addr), "GET /-/healthy HTTP/1.1\r\nHost: %s\r\n", addr)
	}
}

// dialHeld connects to addr, for as long as the test runs.
func dialHeld(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
