package config

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/loadprobe/loadprobe/plan"
)

// webSocketScheme reports the schemes of a WebSocket probe's URL.
func webSocketScheme(scheme string) bool { return scheme == "ws" || scheme == "wss" }

// webSocketHeaders, with every Sec-WebSocket-* header but the protocol, are
// the handshake's own: the client sets them, and a second value would break
// the upgrade.
var webSocketHeaders = []string{"Upgrade", "Connection"}

// webSocket checks what is particular to WebSocket probes
// (docs/websocket.md), and that load.sessions is set only on them.
func (v *validator) webSocket(p *Probe, pp keyPath) {
	rp, sp := pp.to("request"), pp.to("load", "sessions")
	u, err := url.Parse(p.Request.URL)
	ws := err == nil && webSocketScheme(u.Scheme)
	switch s := p.Load.Sessions; {
	case s < 0:
		v.errorf(sp, "must not be negative (got %d)", s)
	case s > 0 && !ws:
		v.errorf(sp, "applies to WebSocket probes (ws:// or wss:// URLs) only")
	case s > 0 && p.Load.Mode() == plan.ModeConcurrency:
		v.errorf(sp, "applies to open-loop loads (rate, phases): a concurrency level is already a number of sessions")
	}
	if !ws {
		return
	}
	r := &p.Request
	if r.Method != "" && r.Method != http.MethodGet {
		v.errorf(rp.to("method"), "a WebSocket handshake is a GET (got %q)", r.Method)
	}
	if len(r.ValidStatusCodes) > 0 {
		v.errorf(rp.to("valid_status_codes"), "does not apply to WebSocket probes: a reply is a success, a refused upgrade an http_error")
	}
	hc := &r.HTTPClientConfig
	if hc.OAuth2 != nil {
		v.errorf(rp.to("oauth2"), "is not supported for WebSocket probes")
	}
	if hc.FollowRedirects {
		v.errorf(rp.to("follow_redirects"), "is not supported for WebSocket probes: a redirect is a refused upgrade")
	}
	hp := rp.to("headers")
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		canonical := http.CanonicalHeaderKey(name)
		// Sec-WebSocket-Protocol is the one a client chooses.
		if slices.Contains(webSocketHeaders, canonical) ||
			strings.HasPrefix(canonical, "Sec-Websocket-") && canonical != "Sec-Websocket-Protocol" {
			v.errorAt(hp, hp.to(name), "%s is set by the WebSocket handshake itself", name)
		}
	}
}

// WebSocket reports whether r makes a WebSocket probe: a ws:// or wss://
// URL (docs/websocket.md).
func (r Request) WebSocket() bool {
	u, err := url.Parse(r.URL)
	return err == nil && webSocketScheme(u.Scheme)
}
