package transport

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// requestLines serves 200 to every request on a loopback listener and
// returns its address and the request lines it has read so far.
func requestLines(t *testing.T) (addr string, lines func() []string) {
	var mu sync.Mutex
	var seen []string
	addr = testkit.ServeLoopback(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			mu.Lock()
			seen = append(seen, strings.TrimSuffix(line, "\r\n"))
			mu.Unlock()
			for line != "\r\n" {
				if line, err = br.ReadString('\n'); err != nil {
					return
				}
			}
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
				return
			}
		}
	})
	return addr, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// The lean client writes the request line of a templated URL as net/http
// writes it for the same rendered URL: spaces, bytes outside ASCII and
// backslashes in the path percent-encoded, the query as it is, no fragment,
// and no request at all where net/http sends none.
func TestLeanClientWritesTheTargetNetHTTPWrites(t *testing.T) {
	addr, lines := requestLines(t)
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "rows.csv"), templatedRows)
	for _, target := range templatedTargets {
		sent := map[string]string{}
		for path, extra := range clientPaths {
			file := filepath.Join(dir, "loadprobe.yml")
			yml := fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: url
    request: {url: 'http://%s/%s', timeout: 5s%s}
    data: {file: rows.csv}
    load: {concurrency: [1]}
`, addr, strings.TrimPrefix(target, "/"), extra)
			cfg, err := config.Parse(file, []byte(yml))
			if err != nil {
				t.Fatalf("%s: %v", target, err)
			}
			c, conn := firstConn(t, cfg.Plans()[0])
			if got := clientKind(c); got != path {
				t.Fatalf("%s: the %s client, want %s", target, got, path)
			}
			before := len(lines())
			code, o := conn.Do(time.Now().Add(5 * time.Second))
			conn.Close()
			c.Close()
			sent[path] = fmt.Sprintf("%d %v (no request)", code, o)
			if l := lines(); len(l) > before {
				sent[path] = l[len(l)-1]
			}
		}
		if sent["fast"] != sent["std"] {
			t.Errorf("%s:\nlean client: %s\n   net/http: %s", target, sent["fast"], sent["std"])
		}
	}
}

// templatedTargets are request targets whose rendering net/http would
// escape, or not send, with rows.csv's values (templatedRows).
var templatedTargets = []string{
	`/a b/é?q=x y&i={{index}}#frag`,
	`/{{index}}/ü ö?k=ä ö`,
	`/back\slash/{{index}}?p=a\b`,
	`/{{index}}#frag?not=query`,
	`/sp ace/%2F/{{index}}`,
	`/{{index}}?q=a#b#c`,
	`/a/{{index}}?`,
	`/v/{{.v}}?v={{.v}}`,
	`/{{index}}/{{.w}}`,
	`/{{index}}/%7e%41`,
	`/plain/{{index}}?a=1&b=2`,
	`{{index}}`,
}

const templatedRows = "v,w\n\"a b é#x\\y%2F\",50%\n"

// Over HTTP/2 the lean client sends the :path net/http sends for the same
// rendered URL, as it writes the request line over HTTP/1.1.
func TestLeanH2ClientSendsThePathNetHTTPSends(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // by X-Client: the last request's proto and path
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Client")] = r.Proto + " " + r.RequestURI
		mu.Unlock()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "rows.csv"), templatedRows)
	for _, target := range templatedTargets {
		sent := map[string]string{}
		for path, extra := range clientPaths {
			yml := fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: url
    request: {url: '%s/%s', timeout: 5s, headers: {X-Client: %s}, tls_config: {insecure_skip_verify: true}%s}
    data: {file: rows.csv}
    load: {concurrency: [1]}
`, srv.URL, strings.TrimPrefix(target, "/"), path, extra)
			cfg, err := config.Parse(filepath.Join(dir, "loadprobe.yml"), []byte(yml))
			if err != nil {
				t.Fatalf("%s: %v", target, err)
			}
			c, conn := firstConn(t, cfg.Plans()[0])
			mu.Lock()
			delete(seen, path)
			mu.Unlock()
			code, o := conn.Do(time.Now().Add(5 * time.Second))
			conn.Close()
			c.Close()
			mu.Lock()
			sent[path] = cmpOr(seen[path], fmt.Sprintf("%d %v (no request)", code, o))
			mu.Unlock()
		}
		if sent["fast"] != sent["std"] || strings.HasPrefix(sent["fast"], "HTTP/1") {
			t.Errorf("%s:\nlean client: %s\n   net/http: %s", target, sent["fast"], sent["std"])
		}
	}
}

// clientPaths select the lean client (the default) or net/http
// (follow_redirects) in a probe's request.
var clientPaths = map[string]string{"fast": "", "std": ", follow_redirects: true"}

// A data value that makes a request render above the size bound leaves it
// unsent on both paths of https, over HTTP/2 as over HTTP/1.1.
func TestH2RequestAboveTheBoundIsNotSent(t *testing.T) {
	var served sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Store(r.Header.Get("X-Client"), true)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "rows.csv"), "v\n"+strings.Repeat("x", plan.MaxRequestBytes+1)+"\n")
	for path, extra := range clientPaths {
		yml := fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: big
    request: {url: '%s/', method: POST, body: '{{.v}}', timeout: 5s, headers: {X-Client: %s}, tls_config: {insecure_skip_verify: true}%s}
    data: {file: rows.csv}
    load: {concurrency: [1]}
`, srv.URL, path, extra)
		cfg, err := config.Parse(filepath.Join(dir, "loadprobe.yml"), []byte(yml))
		if err != nil {
			t.Fatal(err)
		}
		c, conn := firstConn(t, cfg.Plans()[0])
		_, o := conn.Do(time.Now().Add(5 * time.Second))
		conn.Close()
		c.Close()
		if _, sent := served.Load(path); sent || o != result.TooLarge {
			t.Errorf("%s: outcome %v, reached the server: %v; want %v and unsent", path, o, sent, result.TooLarge)
		}
	}
}
