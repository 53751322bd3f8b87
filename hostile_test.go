package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// holdingServers answer a request and then hold the connection open for as
// long as the client keeps it: a client that waits for the end of the
// response never gets it.
var holdingServers = map[string]string{
	"101 and hold":      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n",
	"never-ending body": "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nhello",
}

// clientPaths select the lean client (the default) or net/http
// (follow_redirects) in a probe's request.
var clientPaths = map[string]string{"fast": "", "std": ", follow_redirects: true"}

// holdingServer serves answer on a loopback listener and signals requests
// on the returned channel. Its connections close when the test ends.
func holdingServer(t *testing.T, answer string) (url string, requests <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{}, 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				io.WriteString(c, answer)
				select {
				case seen <- struct{}{}:
				default:
				}
				io.Copy(io.Discard, c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/", seen
}

func hostileConfig(t *testing.T, url, path, timeout, stepDuration string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "loadprobe.yml")
	testkit.WriteFile(t, file, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: hostile
    request: {url: "%s", timeout: %s%s}
    load: {concurrency: [2], step_duration: %s}
`, url, timeout, clientPaths[path], stepDuration))
	return file
}

// startLoadprobe starts the binary and returns a channel closed once it has
// ended.
func startLoadprobe(t *testing.T, stdout *bytes.Buffer, args ...string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	return cmd, exited
}

// TestRunHostileServersTimeOut runs a step against servers that never end
// their response: on both client paths every attempt ends at its deadline
// as a timeout, and the run ends.
func TestRunHostileServersTimeOut(t *testing.T) {
	for server, answer := range holdingServers {
		for path := range clientPaths {
			t.Run(server+"/"+path, func(t *testing.T) {
				url, _ := holdingServer(t, answer)
				var stdout bytes.Buffer
				_, exited := startLoadprobe(t, &stdout, "run", "--output=json",
					"--config.file="+hostileConfig(t, url, path, "200ms", "1s"))
				select {
				case <-exited:
				case <-time.After(time.Minute):
					t.Fatal("a 1 s run against a server that holds its connections did not end within a minute")
				}
				var out struct{ Probes []result.Result }
				if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out.Probes) != 1 || len(out.Probes[0].Steps) != 1 {
					t.Fatalf("stdout is not one probe's one step (%v):\n%s", err, stdout.String())
				}
				step := out.Probes[0].Steps[0]
				// Two connections for a second, each attempt ended by its
				// 200 ms deadline: more attempts than connections.
				if step.Attempts <= 2 || step.Errors["timeout"] != step.Attempts || len(step.Responses) != 0 {
					t.Errorf("%d attempts, errors %v, responses %v; want every attempt of several a timeout",
						step.Attempts, step.Errors, step.Responses)
				}
			})
		}
	}
}

// TestRunSIGTERMDuringHostileServers stops `run` while its attempts are held
// by servers that never end their response: the process ends within 5 s.
func TestRunSIGTERMDuringHostileServers(t *testing.T) {
	for server, answer := range holdingServers {
		for path := range clientPaths {
			t.Run(server+"/"+path, func(t *testing.T) {
				url, requests := holdingServer(t, answer)
				var stdout bytes.Buffer
				cmd, exited := startLoadprobe(t, &stdout, "run", "--output=json",
					"--config.file="+hostileConfig(t, url, path, "1m", "10m"))
				select {
				case <-requests:
				case <-exited:
					t.Fatalf("loadprobe ended before its attempts were held: %v", cmd.ProcessState)
				case <-time.After(time.Minute):
					t.Fatal("no request reached the server within a minute")
				}
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				select {
				case <-exited:
					if !cmd.ProcessState.Exited() {
						t.Errorf("loadprobe ended by %v, not by itself", cmd.ProcessState)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("loadprobe still runs 5 s after SIGTERM")
				}
				var out struct{ Probes []result.Result }
				if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out.Probes) != 1 {
					t.Fatalf("stdout is not one probe's result (%v):\n%s", err, stdout.String())
				}
				if r := out.Probes[0].Ended; r != result.ResultCanceled {
					t.Errorf("result %q, want %q", r, result.ResultCanceled)
				}
			})
		}
	}
}
