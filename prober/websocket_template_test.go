package prober

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/loadprobe/loadprobe/result"
)

// wsHandshake is what a handshake's request carried: its URL's user
// parameter and its X-User header.
type wsHandshake struct{ query, header string }

// wsRecorder is a WebSocket echo server that keeps what it received: each
// handshake's URL and X-User header, and every message.
type wsRecorder struct {
	mu         sync.Mutex
	handshakes []wsHandshake
	messages   []string
}

func (rec *wsRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{}
	s, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer s.Close()
	rec.mu.Lock()
	rec.handshakes = append(rec.handshakes, wsHandshake{query: r.URL.Query().Get("user"), header: r.Header.Get("X-User")})
	rec.mu.Unlock()
	for {
		typ, msg, err := s.ReadMessage()
		if err != nil {
			return
		}
		rec.mu.Lock()
		rec.messages = append(rec.messages, string(msg))
		rec.mu.Unlock()
		if s.WriteMessage(typ, msg) != nil {
			return
		}
	}
}

// A ws:// probe renders its templates as an HTTP probe does: the URL and
// the headers at each handshake, the message at every attempt, with the
// data file's rows and {{index}}.
func TestWebSocketRendersTemplates(t *testing.T) {
	rec := &wsRecorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: ws
    data: {file: users.csv}
    request:
      url: %s/echo?user={{.user}}
      headers: {X-User: "{{.user}}"}
      body: '{"i": {{index}}, "user": "{{.user}}"}'
    load: {concurrency: [2], step_duration: 300ms}
`, url))
	r := mustRun(t, context.Background(), p, Options{})
	if r.Ended != result.ResultCompleted {
		t.Fatalf("result %s (%s); want completed", r.Ended, r.Error)
	}
	users := p.Rows.Table
	isUser := func(u string) bool {
		for i := range users.Len() {
			if users.Row(i).Field(0) == u {
				return true
			}
		}
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.handshakes) == 0 || len(rec.messages) < 10 {
		t.Fatalf("%d handshakes, %d messages; want sessions that carried messages", len(rec.handshakes), len(rec.messages))
	}
	for _, h := range rec.handshakes {
		if !isUser(h.query) || h.header != h.query {
			t.Errorf("handshake with user=%q, X-User %q: want the URL and the header written with one row's user", h.query, h.header)
		}
	}
	seen := map[uint64]bool{}
	for _, m := range rec.messages {
		var msg struct {
			I    uint64 `json:"i"`
			User string `json:"user"`
		}
		if err := json.Unmarshal([]byte(m), &msg); err != nil || !isUser(msg.User) || msg.I == 0 {
			t.Fatalf("message %q: want {{index}} and a row's user written in", m)
		}
		if seen[msg.I] {
			t.Errorf("index %d sent twice: each message is an attempt of its own", msg.I)
		}
		seen[msg.I] = true
	}
}
