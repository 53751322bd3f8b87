package prober

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/config"
)

// goProbe is a probe built in Go as the package example builds one.
func goProbe(url string) config.Probe {
	p := config.DefaultProbe
	p.Name = "go"
	p.Request.URL = url
	p.Load.Concurrency = []int{1}
	p.Load.StepDuration = model.Duration(200 * time.Millisecond)
	return p
}

// rawListener counts the connections and bytes that reach it.
func rawListener(t *testing.T) (addr string, received func() (conns, bytes int64)) {
	var nconns, nbytes atomic.Int64
	addr = serveLoopback(t, func(c net.Conn) {
		nconns.Add(1)
		n, _ := io.Copy(io.Discard, c)
		nbytes.Add(n)
	})
	return addr, func() (int64, int64) {
		time.Sleep(100 * time.Millisecond) // what was sent has arrived
		return nconns.Load(), nbytes.Load()
	}
}

// Run compiles the probe it is given, as config.Parse compiles a file's:
// one that is not valid is an error, and nothing reaches the target.
func TestRunRefusesAnInvalidProbe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*config.Probe)
		want  string // in the error
	}{
		{"CR in a header value", func(p *config.Probe) {
			p.Request.Headers = map[string]string{"X-A": "a\rInjected: 1"}
		}, "request.headers: the value of X-A holds a control character"},
		{"LF in a header value", func(p *config.Probe) {
			p.Request.Headers = map[string]string{"X-A": "a\nInjected: 1"}
		}, "request.headers: the value of X-A holds a control character"},
		{"LF in a header value over net/http", func(p *config.Probe) {
			p.Request.HTTPClientConfig.FollowRedirects = true
			p.Request.Headers = map[string]string{"X-A": "a\n"}
		}, "the value of X-A holds a control character"},
		{"LF in a WebSocket header value", func(p *config.Probe) {
			p.Request.URL = "ws" + strings.TrimPrefix(p.Request.URL, "http")
			p.Request.Headers = map[string]string{"X-A": "a\n"}
		}, "the value of X-A holds a control character"},
		{"unknown template function", func(p *config.Probe) { p.Request.Body = "{{nosuch}}" }, "request.body"},
		{"no name", func(p *config.Probe) { p.Name = "" }, "name: required"},
		{"no timeout", func(p *config.Probe) { p.Request.Timeout = 0 }, "request.timeout: must be positive"},
		{"no load", func(p *config.Probe) { p.Load.Concurrency = nil }, "load: one of concurrency, rate, phases or search is required"},
		{"unreadable credentials", func(p *config.Probe) {
			p.Request.HTTPClientConfig.BearerTokenFile = "/nonexistent/token"
		}, "/nonexistent/token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, received := rawListener(t)
			p := goProbe("http://" + addr + "/")
			tc.setup(&p)
			r, err := Run(context.Background(), p, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run() = %s, %v; want an error with %q", r.Ended, err, tc.want)
			}
			if conns, bytes := received(); conns != 0 || bytes != 0 {
				t.Errorf("the target got %d connections, %d bytes; want nothing sent", conns, bytes)
			}
		})
	}
}

// A body set in Go is the body sent, on either client.
func TestRunSendsTheBodySetInGo(t *testing.T) {
	for _, path := range []string{"fast", "std"} {
		t.Run(path, func(t *testing.T) {
			var mu sync.Mutex
			bodies := map[string]int{}
			addr := recordingServer(t, func(_ *http.Request, body []byte) {
				mu.Lock()
				bodies[string(body)]++
				mu.Unlock()
			})
			p := goProbe("http://" + addr + "/")
			p.Request.Method = "POST"
			p.Request.Body = `{"hello": "world"}`
			p.Request.HTTPClientConfig.FollowRedirects = path == "std"
			if got := ClientPath(p); strings.Contains(got, "net/http") != (path == "std") {
				t.Fatalf("client %s; want the %s path", got, path)
			}
			r := mustRun(t, context.Background(), p, Options{})
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != 1 || bodies[p.Request.Body] == 0 || r.Steps[0].Attempts == 0 {
				t.Errorf("the server received bodies %v; want only %q", bodies, p.Request.Body)
			}
		})
	}
}
