package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// randomCodeServer answers every request with a random status code from
// 200 to 999, keeping the connection.
func randomCodeServer(t *testing.T) string {
	t.Helper()
	return serveConns(t, "127.0.0.1:0", func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if _, err := fmt.Fprintf(c, "HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n", 200+rand.IntN(800)); err != nil {
				return
			}
		}
	})
}

// serveConns listens on addr and serves each connection with handle, which
// returns when done with it; the listener closes when the test ends. It
// returns the address listened on.
func serveConns(t *testing.T, addr string, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// randomCloseServer upgrades, reads one message and closes the session
// with a random close code of the private and registered ranges
// (3000–4999), which a client accepts.
func randomCloseServer(t *testing.T) string {
	t.Helper()
	var upgrader websocket.Upgrader
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
		msg := websocket.FormatCloseMessage(3000+rand.IntN(2000), "bye")
		c.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestTargetChosenCodesStayBounded runs a daemon against a target that
// answers random status codes and one that closes sessions with random
// close codes: after their runs, /metrics holds at most 21 code series per
// probe and family (20 codes and "other"), per level for the step series.
func TestTargetChosenCodesStayBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: codes
    request: {url: "http://%s/", timeout: 1s}
    load: {concurrency: [1, 2, 4], step_duration: 1s}
    abort: {error_ratio: 1} # every level runs, however many codes are errors
  - name: closes
    request: {url: "ws://%s/ws", body: "hi", timeout: 1s}
    load: {concurrency: [2], step_duration: 2s}
`, randomCodeServer(t), randomCloseServer(t)))
	d := startDaemon(t, exec.Command(binary, "--config.file="+file, "--web.listen-address=127.0.0.1:0"))
	// Two runs of 3 and 2 s, one after the other, and their settling.
	var m string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, m = d.get(t, "/metrics")
		if strings.Contains(m, `loadprobe_run_last_completed_timestamp_seconds{probe="codes"}`) &&
			strings.Contains(m, `loadprobe_run_last_completed_timestamp_seconds{probe="closes"}`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two probes' runs did not both end within a minute:\n%s", grepLines(m, "loadprobe_run"))
		}
	}
	count := func(family, probe string) (n int, other bool) {
		for _, line := range strings.Split(m, "\n") {
			if strings.HasPrefix(line, family+"{") && strings.Contains(line, `probe="`+probe+`"`) {
				n++
				other = other || strings.Contains(line, `code="other"`)
			}
		}
		return n, other
	}
	for _, tc := range []struct {
		family, probe string
		most          int
	}{
		{"loadprobe_responses_total", "codes", 21},
		{"loadprobe_step_responses", "codes", 3 * 21},
		{"loadprobe_websocket_close_codes_total", "closes", 21},
	} {
		n, other := count(tc.family, tc.probe)
		t.Logf("%s: %d series", tc.family, n)
		if n > tc.most || !other {
			t.Errorf(`%s of probe %s: %d series (code="other" among them: %v), want at most %d with "other"`, tc.family, tc.probe, n, other, tc.most)
		}
	}
}

// grepLines returns the lines of s that contain what.
func grepLines(s, what string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, what) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
