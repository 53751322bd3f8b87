package prober

import (
	"context"
	"net/http"
	"strings"
	"sync"
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

// A probe built in Go is compiled as config.Parse compiles a file's: one
// that is not valid is an error, so it never reaches Run.
func TestCompileRefusesAnInvalidProbe(t *testing.T) {
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
			p := goProbe("http://127.0.0.1:1/")
			tc.setup(&p)
			if _, err := config.Compile(p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Compile() = %v; want an error with %q", err, tc.want)
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
			spec := goProbe("http://" + addr + "/")
			spec.Request.Method = "POST"
			spec.Request.Body = `{"hello": "world"}`
			spec.Request.HTTPClientConfig.FollowRedirects = path == "std"
			p, err := config.Compile(spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := ClientPath(p); strings.Contains(got, "net/http") != (path == "std") {
				t.Fatalf("client %s; want the %s path", got, path)
			}
			r := mustRun(t, context.Background(), p, Options{})
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != 1 || bodies[spec.Request.Body] == 0 || r.Steps[0].Attempts == 0 {
				t.Errorf("the server received bodies %v; want only %q", bodies, spec.Request.Body)
			}
		})
	}
}
