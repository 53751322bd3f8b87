package config

import "testing"

// A WebSocket probe is a probe with a ws:// or wss:// URL; an open-loop one
// may bound its sessions, and leaving them out means as many as needed.
func TestWebSocketProbes(t *testing.T) {
	c, err := Parse("ws.yml", []byte(`allowed_targets: ["127.0.0.1"]
probes:
  - name: sessions
    request: {url: "ws://127.0.0.1:8080/ws-limited", body: '{"op":"ping"}'}
    load: {concurrency: [4, 8, 16]}
  - name: messages
    request:
      url: wss://127.0.0.1:8443/ws
      headers: {Sec-WebSocket-Protocol: chat.v1}
      tls_config: {insecure_skip_verify: true}
    load: {rate: [100, 200], sessions: 10}
  - name: any-sessions
    request: {url: "ws://127.0.0.1:8080/ws"}
    load: {rate: [100]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 10, 0} {
		if got := c.Probes[i].Load.Sessions; got != want {
			t.Errorf("%s: sessions %d, want %d", c.Probes[i].Name, got, want)
		}
	}
	if got := bodyOf(c.Plans()[0]); got != `{"op":"ping"}` {
		t.Errorf("payload %q, want the body", got)
	}
}
