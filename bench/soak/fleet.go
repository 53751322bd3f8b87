package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a process has between SIGTERM and SIGKILL: the
// daemon stops its load within a second (docs/commands.md, "Command line").
const stopGrace = 10 * time.Second

// fleet is the processes of a soak: the demo targets and the daemon,
// each its own process, so that the daemon's RSS and fds are its own.
type fleet struct {
	procs      []*proc
	cancel     context.CancelFunc
	daemon     *proc
	metricsURL string
	logPath    string
	log        *os.File
}

// proc is a started process; done is closed when it has ended.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startFleet builds loadprobe into dir and starts p.hosts demo targets and
// the daemon probing them. On error, the returned fleet (when not nil)
// holds what was started, for stop.
func startFleet(ctx context.Context, p params, dir string) (*fleet, error) {
	bin := filepath.Join(dir, "loadprobe")
	if err := buildLoadprobe(ctx, bin); err != nil {
		return nil, err
	}
	f := &fleet{logPath: filepath.Join(dir, "soak.log")}
	var err error
	if f.log, err = os.Create(f.logPath); err != nil {
		return nil, err
	}
	ctx, f.cancel = context.WithCancel(ctx)
	start := func(args ...string) (*proc, error) {
		pr, err := startProc(ctx, f.log, bin, args...)
		if err == nil {
			f.procs = append(f.procs, pr)
		}
		return pr, err
	}

	targets := make([]string, p.hosts)
	for i := range targets {
		if targets[i], err = freeAddr(fmt.Sprintf("127.0.0.%d", i+1)); err != nil {
			return f, err
		}
		target, err := start("target", "--listen="+targets[i])
		if err != nil {
			return f, err
		}
		if err := waitOK(ctx, "http://"+targets[i]+"/noop", target); err != nil {
			return f, fmt.Errorf("demo target: %w", err)
		}
	}

	config := filepath.Join(dir, "soak.yml")
	if err := os.WriteFile(config, []byte(soakConfig(p.probes, targets, p.scheduleInterval.String())), 0o600); err != nil {
		return f, err
	}
	listen, err := freeAddr("127.0.0.1")
	if err != nil {
		return f, err
	}
	if f.daemon, err = start("--config.file="+config, "--web.listen-address="+listen,
		"--storage.path="+filepath.Join(dir, "store")); err != nil {
		return f, err
	}
	if err := waitOK(ctx, "http://"+listen+"/-/ready", f.daemon); err != nil {
		return f, fmt.Errorf("daemon: %w", err)
	}
	f.metricsURL = "http://" + listen + "/metrics"
	return f, nil
}

// stop ends every process: SIGTERM, then SIGKILL after stopGrace.
func (f *fleet) stop() {
	f.cancel()
	for _, pr := range f.procs {
		<-pr.done
	}
	f.log.Close()
}

// logTail is the end of the processes' log, for an error message.
func (f *fleet) logTail() string {
	b, err := os.ReadFile(f.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "the log's last lines:\n" + strings.Join(lines[max(0, len(lines)-20):], "\n") + "\n"
}

func buildLoadprobe(ctx context.Context, bin string) error {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building loadprobe: %w", err)
	}
	return nil
}

// startProc starts bin; when ctx ends it gets SIGTERM, and SIGKILL
// stopGrace later if it is still there.
func startProc(ctx context.Context, log *os.File, bin string, args ...string) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pr := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		pr.err = cmd.Wait()
		close(pr.done)
	}()
	return pr, nil
}

// freeAddr is host with a port free now. Another process could take it
// before ours listens; the readiness check then fails, loudly.
func freeAddr(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitOK polls url, served by pr, until it answers 200, for at most 30
// seconds and while pr runs.
func waitOK(ctx context.Context, url string, pr *proc) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer 200 within 30s", url)
		case <-pr.done:
			return fmt.Errorf("ended before %s answered: %v", url, pr.err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
