package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// daemonProcess is a loadprobe daemon run as a process by a test.
type daemonProcess struct {
	cmd    *exec.Cmd
	base   string        // http://ADDRESS it listens on
	exited chan struct{} // closed once it has ended

	mu  sync.Mutex
	log []string
}

var listeningLine = regexp.MustCompile(`msg="Listening on" address=(\S+)`)

// startDaemon starts cmd, a daemon listening on 127.0.0.1:0 (or a command
// that execs one), and returns once its log names the address it listens
// on. The process is killed when the test ends.
func startDaemon(t *testing.T, cmd *exec.Cmd) *daemonProcess {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemonProcess{cmd: cmd, exited: make(chan struct{})}
	listening := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			d.mu.Lock()
			d.log = append(d.log, s.Text())
			d.mu.Unlock()
			if m := listeningLine.FindStringSubmatch(s.Text()); m != nil {
				listening <- "http://" + m[1]
			}
		}
		cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-d.exited
	})
	select {
	case d.base = <-listening:
	case <-d.exited:
		t.Fatalf("loadprobe exited before listening:\n%s", d.Log())
	case <-time.After(30 * time.Second):
		t.Fatalf("loadprobe did not listen within 30s:\n%s", d.Log())
	}
	return d
}

// Log is what the daemon has logged so far.
func (d *daemonProcess) Log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.log, "\n")
}

// get fetches path and returns the status code and body.
func (d *daemonProcess) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(d.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// wait waits at most limit for the daemon to end; it reports whether it did.
func (d *daemonProcess) wait(limit time.Duration) bool {
	select {
	case <-d.exited:
		return true
	case <-time.After(limit):
		return false
	}
}
