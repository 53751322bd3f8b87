package prober

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/prober/transport/h1"
	"github.com/loadprobe/loadprobe/result"
)

// templatedBody is the bench's templated probe: a POST whose body varies
// with {{index}} and {{random_int}}.
const templatedBody = `{"id": {{index}}, "n": {{random_int 1 999}}}`

func postProbeYAML(url, body, extra string) string {
	return fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: post
    request:
      url: %s
      method: POST
      body: '%s'
%s    load: {concurrency: [1]}
`, url, body, extra)
}

// A templated request on the lean client allocates nothing per attempt
// once its buffers have grown: its varying bytes are written in place.
func TestTemplatedFastZeroAllocs(t *testing.T) {
	s := testkit.NewServer(t, testkit.FixedServer)
	url := strings.Replace(s.URL, "/path?q=1", "/items/{{random_int 1 5000}}?i={{index}}", 1)
	p := templatedProbe(t, postProbeYAML(url, templatedBody, "      headers: {X-Request-Id: '{{uuid}}'}\n"))
	c, err := newWorkload(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if _, fast := c.(*request).t.(*h1.Client); !fast {
		t.Fatal("a templated plain-http request left the lean client")
	}
	conn := attempter{c.newUser()}
	defer conn.Close()
	deadline := time.Now().Add(time.Minute)
	conn.Do(deadline) // dial, grow the buffers
	if allocs := testing.AllocsPerRun(500, func() {
		if _, o := conn.Do(deadline); o != result.Success {
			t.Fatalf("outcome %v", o)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per templated request, want 0", allocs)
	}
}

// Both paths send what the templates write: URL, header values and body,
// with a Content-Length that fits the body of each attempt.
func TestTemplatedRequestOnBothPaths(t *testing.T) {
	for _, path := range []struct{ name, extra string }{
		{"fast", ""},
		{"std", "      follow_redirects: true\n"},
	} {
		t.Run(path.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			addr := recordingServer(t, func(r *http.Request, body []byte) {
				mu.Lock()
				got = append(got, fmt.Sprintf("%s %s %s %s %d", r.Method, r.URL, r.Header.Get("X-Id"), body, r.ContentLength))
				mu.Unlock()
			})
			p := templatedProbe(t, postProbeYAML("http://"+addr+"/items/{{index}}", `{"id": {{index}}, "s": "{{random_string 3}}"}`,
				path.extra+"      headers: {X-Id: 'id-{{index}}'}\n"))
			attempts(t, p, 1, 10)
			if len(got) != 10 {
				t.Fatalf("%d requests, want 10", len(got))
			}
			for i, line := range got {
				prefix := fmt.Sprintf(`POST /items/%d id-%d {"id": %d, "s": "`, i+1, i+1, i+1)
				length := len(fmt.Sprintf(`{"id": %d, "s": "abc"}`, i+1))
				if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, fmt.Sprintf(`"} %d`, length)) {
					t.Errorf("attempt %d sent %q, want %q… with length %d", i+1, line, prefix, length)
				}
			}
		})
	}
}

// BenchmarkConnDoTemplated is BenchmarkConnDo's fast path with the bench's
// POST body, fixed and templated: what templating costs per request.
func BenchmarkConnDoTemplated(b *testing.B) {
	s := testkit.NewServer(b, testkit.FixedServer)
	for _, body := range []string{`{"id": 123456, "n": 789}`, templatedBody} {
		name := "fixed"
		if strings.Contains(body, "{{") {
			name = "templated"
		}
		b.Run(name, func(b *testing.B) {
			c, err := newWorkload(context.Background(), templatedProbe(b, postProbeYAML(s.URL, body, "")), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			conn := attempter{c.newUser()}
			defer conn.Close()
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				if _, o := conn.Do(time.Now().Add(5 * time.Second)); o != result.Success {
					b.Fatalf("outcome %v", o)
				}
			}
			testkit.ReportCPU(b, cpu)
		})
		// 50 workers, one Conn each, as the engine runs them.
		b.Run(name+"/parallel", func(b *testing.B) {
			c, err := newWorkload(context.Background(), templatedProbe(b, postProbeYAML(s.URL, body, "")), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			defer testkit.ReportCPU(b, cpu)
			b.RunParallel(func(pb *testing.PB) {
				conn := attempter{c.newUser()}
				defer conn.Close()
				for pb.Next() {
					if _, o := conn.Do(time.Now().Add(5 * time.Second)); o != result.Success {
						b.Errorf("outcome %v", o)
						return
					}
				}
			})
		})
	}
}
