package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/prober/transport/ws"
	"github.com/loadprobe/loadprobe/result"
)

// A WebSocket probe's handshake carries the request's headers and its
// static credentials, as an HTTP probe's request does; a server that
// refuses them answers the upgrade with 401, an http_error.
func TestWebSocketHandshakeCarriesHeadersAndCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if (auth != "Bearer t0ken" && auth != basicAuth("u", "p")) || r.Header.Get("X-Tenant") != "a" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		testkit.Upgrade(w, r, testkit.Echo)
	}))
	t.Cleanup(srv.Close)
	tenant := map[string]string{"X-Tenant": "a"}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		client  commoncfg.HTTPClientConfig
		code    int
		want    result.Outcome
	}{
		{"authorization", tenant, commoncfg.HTTPClientConfig{Authorization: &commoncfg.Authorization{Credentials: "t0ken"}}, http.StatusSwitchingProtocols, result.Success},
		{"basic_auth", tenant, commoncfg.HTTPClientConfig{BasicAuth: &commoncfg.BasicAuth{Username: "u", Password: "p"}}, http.StatusSwitchingProtocols, result.Success},
		{"wrong credentials", tenant, commoncfg.HTTPClientConfig{Authorization: &commoncfg.Authorization{Credentials: "guess"}}, http.StatusUnauthorized, result.HTTPError},
		{"header missing", nil, commoncfg.HTTPClientConfig{Authorization: &commoncfg.Authorization{Credentials: "t0ken"}}, http.StatusUnauthorized, result.HTTPError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := testRequest("ws" + strings.TrimPrefix(srv.URL, "http"))
			req.Headers, req.HTTPClientConfig = tc.headers, tc.client
			ws, err := ws.New(compileRequest(t, req), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			if code, o := ws.NewConn(template.NewVars(0)).Do(time.Now().Add(2 * time.Second)); code != httpCode(tc.code) || o != tc.want {
				t.Errorf("code %d, outcome %v; want %d, %v", code, o, tc.code, tc.want)
			}
		})
	}
}
