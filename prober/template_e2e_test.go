package prober

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport"
	"github.com/loadprobe/loadprobe/result"
)

// recordingServer answers every request with an empty 200 at once and
// hands its request to seen; a raw loop over net/http's parser, so that a
// hundred thousand requests take a second or two.
func recordingServer(t *testing.T, seen func(*http.Request, []byte)) string {
	return testkit.ServeLoopback(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(req.Body)
			seen(req, body)
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); err != nil {
				return
			}
		}
	})
}

// templatedProbe loads a probe from YAML as a user writes it; dir is where
// data files are found.
func templatedProbe(t testing.TB, yml string) *plan.Probe {
	t.Helper()
	cfg, err := config.Parse("../examples/test.yml", []byte(yml))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yml)
	}
	return cfg.Plans()[0]
}

// attempts sends n attempts over conns connections at once, as workers do.
func attempts(t *testing.T, p *plan.Probe, conns, n int) {
	t.Helper()
	c, err := newWorkload(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func(conn transport.Conn) {
			defer wg.Done()
			defer conn.Close()
			for range n / conns {
				if code, o := conn.Do(time.Now().Add(5 * time.Second)); code != result.HTTPStatus(200) {
					t.Errorf("attempt: %d %v", code, o)
					return
				}
			}
		}(attempter{c.newUser()})
	}
	wg.Wait()
}

// {{index}} is unique over 100 000 attempts of 8 workers, on both clients'
// paths: it is taken once per attempt, never per connection.
func TestIndexIsUniquePerAttempt(t *testing.T) {
	const n = 100_000
	var mu sync.Mutex
	seen := make(map[uint64]int, n)
	addr := recordingServer(t, func(r *http.Request, body []byte) {
		i, err := strconv.ParseUint(r.URL.Query().Get("i"), 10, 64)
		j, _ := strconv.ParseUint(strings.TrimPrefix(string(body), "i="), 10, 64)
		mu.Lock()
		defer mu.Unlock()
		if err != nil || i != j {
			seen[0]++ // an index missing, or another in the body
		}
		seen[i]++
	})
	p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: index
    request:
      url: http://%s/items?i={{index}}
      method: POST
      body: i={{index}}
    load: {concurrency: [8]}
`, addr))
	attempts(t, p, 8, n)
	if len(seen) != n || seen[0] != 0 {
		t.Fatalf("%d distinct indices in %d attempts (%d without one, or another in the body)", len(seen), n, seen[0])
	}
	for i := uint64(1); i <= n; i++ {
		if seen[i] != 1 {
			t.Fatalf("index %d sent %d times", i, seen[i])
		}
	}
}

// A CSV of 1000 users is cycled in file order, and in random order with
// every row used once per cycle.
func TestDataRowsReachTheTarget(t *testing.T) {
	users, err := os.ReadFile("../examples/users.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(users)), "\n")[1:]
	if len(lines) != 1000 {
		t.Fatalf("examples/users.csv holds %d users, want 1000", len(lines))
	}
	for _, order := range []string{"sequential", "random"} {
		t.Run(order, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			addr := recordingServer(t, func(r *http.Request, body []byte) {
				mu.Lock()
				got = append(got, strings.TrimPrefix(r.URL.Path, "/users/")+","+r.Header.Get("X-Password"))
				mu.Unlock()
			})
			p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: users
    data: {file: users.csv, order: %s}
    request:
      url: http://%s/users/{{.user}}
      headers: {X-Password: "{{.password}}"}
    load: {concurrency: [1]}
`, order, addr))
			attempts(t, p, 1, 2000)
			for cycle := range 2 {
				pass := got[cycle*1000 : (cycle+1)*1000]
				count := map[string]int{}
				inOrder := 0
				for i, row := range pass {
					count[row]++
					if row == lines[i] {
						inOrder++
					}
				}
				for _, row := range lines {
					if count[row] != 1 {
						t.Fatalf("cycle %d: user %s sent %d times", cycle, row, count[row])
					}
				}
				if order == "sequential" && inOrder != 1000 || order == "random" && inOrder > 20 {
					t.Errorf("cycle %d: %d of 1000 users in file order", cycle, inOrder)
				}
			}
		})
	}
}
