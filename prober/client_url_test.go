package prober

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// requestLines serves 200 to every request on a loopback listener and
// returns its address and the request lines it has read so far.
func requestLines(t *testing.T) (addr string, lines func() []string) {
	var mu sync.Mutex
	var seen []string
	addr = serveLoopback(t, func(c net.Conn) {
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
	testkit.WriteFile(t, filepath.Join(dir, "rows.csv"), "v,w\n\"a b é#x\\y%2F\",50%\n")
	targets := []string{
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
	for _, target := range targets {
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
			c, err := newConnector(cfg.Probes[0], result.NopLive{})
			if err != nil {
				t.Fatalf("%s: %v", target, err)
			}
			if got := clientKind(c); got != path {
				t.Fatalf("%s: the %s client, want %s", target, got, path)
			}
			before := len(lines())
			conn := c.NewConn()
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

// clientKind names the client that c is, as clientPaths does.
func clientKind(c connector) string {
	if _, fast := c.(*fastClient); fast {
		return "fast"
	}
	return "std"
}

// clientPaths select the lean client (the default) or net/http
// (follow_redirects) in a probe's request.
var clientPaths = map[string]string{"fast": "", "std": ", follow_redirects: true"}
