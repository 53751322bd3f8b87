package prober

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// tunnelProxy is an HTTP proxy on loopback that records the request line
// of every request it is sent: a CONNECT is tunnelled to the loopback port
// it names, any other request answered 200 by the proxy itself.
func tunnelProxy(t *testing.T) (addr string, lines func() []string) {
	var mu sync.Mutex
	var seen []string
	addr = serveLoopback(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		mu.Lock()
		seen = append(seen, req.Method+" "+req.RequestURI)
		mu.Unlock()
		if req.Method != http.MethodConnect {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
		_, port, _ := net.SplitHostPort(req.Host)
		up, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			return
		}
		defer up.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go io.Copy(up, br)
		io.Copy(c, up)
	})
	return addr, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// The clients go through the proxy that the allowlist check resolved
// (config.ProxyFor): the environment's, read when the client is built, for
// a ws URL the proxy of its http form, as for an http URL.
func TestClientsUseTheCheckedEnvironmentProxy(t *testing.T) {
	echoSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { upgrade(w, r, echo) }))
	t.Cleanup(echoSrv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(echoSrv.URL, "http://"))
	proxy, lines := tunnelProxy(t)
	t.Setenv("HTTP_PROXY", "http://"+proxy)
	t.Setenv("NO_PROXY", "")
	// echo.test is not a loopback name: the environment's proxy applies,
	// and only the proxy can reach it.
	for scheme, want := range map[string]string{
		"ws":   "CONNECT echo.test:" + port,
		"http": "GET http://echo.test:" + port + "/",
	} {
		p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1", "echo.test"]
probes:
  - name: p
    request: {url: "%s://echo.test:%s/", body: "hi", timeout: 5s, proxy_from_environment: true}
    load: {concurrency: [1]}
`, scheme, port))
		c, err := newConnector(p, live.Nop{})
		if err != nil {
			t.Fatal(err)
		}
		conn := c.NewConn()
		code, o := conn.Do(time.Now().Add(5 * time.Second))
		conn.Close()
		c.Close()
		if o != result.Success || !strings.Contains(strings.Join(lines(), "\n"), want) {
			t.Errorf("%s: %d %v, the proxy saw %q; want success through %q", scheme, code, o, lines(), want)
		}
	}
}
