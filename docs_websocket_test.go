package main

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/result"
)

// docsWSConfig is the first YAML block of the WebSocket probes page.
var docsWSConfig = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// The WebSocket config of docs/websocket.md is valid as written, against the demo
// target's default address, and its session ramp finds what its comment
// says: the first failure at 9 sessions, every failure closed. (Its steps
// are shortened here; the load is what the page runs.)
func TestDocsWebSocketConfig(t *testing.T) {
	page, err := os.ReadFile("docs/websocket.md")
	if err != nil {
		t.Fatal(err)
	}
	m := docsWSConfig.FindSubmatch(page)
	if m == nil {
		t.Fatal("docs/websocket.md has no yaml block")
	}
	if _, err := config.Parse("docs/websocket.md", m[1]); err != nil {
		t.Fatalf("the WebSocket config of docs/websocket.md: %v", err)
	}
	srv := httptest.NewServer(target.New(target.Options{}))
	defer srv.Close()
	local := strings.ReplaceAll(string(m[1]), "127.0.0.1:8080", strings.TrimPrefix(srv.URL, "http://"))
	cfg, err := config.Parse("docs/websocket.md", []byte(local))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := cfg.Plan("ws-sessions")
	if !ok {
		t.Fatal("no probe ws-sessions in the WebSocket config of docs/websocket.md")
	}
	p.Load.StepDuration = model.Duration(300 * time.Millisecond)
	r, err := prober.Run(context.Background(), p, prober.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ff := r.BreakingPoints.FirstFailure
	if ff == nil || ff.Level != target.TargetWSSessions+1 {
		t.Fatalf("first failure %+v; docs/websocket.md says 9 sessions", ff)
	}
	for _, s := range r.Steps {
		if failed := s.Attempts - s.Responses[result.HTTPStatus(101)]; s.Errors["closed"] != failed {
			t.Errorf("level %g: %d failed attempts, errors %v; docs/websocket.md says closed", s.Level, failed, s.Errors)
		}
	}
	if r.Ended != result.ResultCompleted && r.Ended != result.ResultAborted {
		t.Errorf("result %s: %s", r.Ended, r.Error)
	}
}
