package target

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func dialWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	s, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// roundTrip sends msg and returns the next message, or the error that
// ended the session.
func roundTrip(s *websocket.Conn, typ int, msg string) (int, string, error) {
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := s.WriteMessage(typ, []byte(msg)); err != nil {
		return 0, "", err
	}
	gotType, got, err := s.ReadMessage()
	return gotType, string(got), err
}

func TestTargetWebSocketEchoes(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	base := "ws" + strings.TrimPrefix(srv.URL, "http")
	for _, route := range []string{"/ws", "/ws-limited"} {
		s := dialWS(t, base+route)
		for _, tc := range []struct {
			typ int
			msg string
		}{{websocket.TextMessage, `{"op":"ping"}`}, {websocket.BinaryMessage, "\x00\xff"}, {websocket.TextMessage, strings.Repeat("x", 100_000)}} {
			if typ, got, err := roundTrip(s, tc.typ, tc.msg); err != nil || typ != tc.typ || got != tc.msg {
				t.Errorf("%s: sent %d bytes of type %d, got %d bytes of type %d, %v", route, len(tc.msg), tc.typ, len(got), typ, err)
			}
		}
	}
	// A plain request is no upgrade.
	resp, err := http.Get(srv.URL + "/ws")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /ws without an upgrade: %d, want 400", resp.StatusCode)
	}
}

// /ws-limited holds TargetWSSessions sessions; one more is closed with 1013
// at once, and a place freed by a session that ends is taken again.
func TestTargetWebSocketLimited(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws-limited"
	var held []*websocket.Conn
	for i := range TargetWSSessions {
		s := dialWS(t, url)
		if _, _, err := roundTrip(s, websocket.TextMessage, "hi"); err != nil {
			t.Fatalf("session %d of %d: %v", i+1, TargetWSSessions, err)
		}
		held = append(held, s)
	}
	beyond := dialWS(t, url)
	_, _, err := roundTrip(beyond, websocket.TextMessage, "hi")
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater || ce.Text != "try again later" {
		t.Fatalf("session %d: %v; want closed with 1013 try again later", TargetWSSessions+1, err)
	}

	// The client closes one: its place is free once the server saw it go.
	_ = held[0].WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	_, _, _ = held[0].ReadMessage() // the server's answer to the close
	again := dialWS(t, url)
	if _, got, err := roundTrip(again, websocket.TextMessage, "again"); err != nil || got != "again" {
		t.Errorf("a session after one closed: %q, %v; want an echo", got, err)
	}
}

// Sessions end when the target stops: Shutdown does not wait for
// hijacked connections, so the target closes them itself.
func TestServeTargetEndsSessionsWhenStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", Options{}, nil, func(a net.Addr) { ready <- a }) }()
	s := dialWS(t, "ws://"+(<-ready).String()+"/ws")
	if _, _, err := roundTrip(s, websocket.TextMessage, "hi"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, _, err := roundTrip(s, websocket.TextMessage, "hi"); err == nil {
		t.Error("the session still echoes after the target stopped")
	}
}
