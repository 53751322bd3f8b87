package prober

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/prober/result"
	"github.com/loadprobe/loadprobe/prober/target"
)

// shopFlow is the two-step flow of the demo target's shop: log in, take
// the token, fetch an item with it. capture is the JSON path of the token.
func shopFlow(t *testing.T, url, capture, load string) config.Probe {
	t.Helper()
	return templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: shop
    data: {file: users.csv}
    flow:
      - name: login
        request: {method: POST, url: "%[1]s/login", body: '{"user": "{{.user}}"}'}
        capture: {token: {json: %[2]s}}
      - name: item
        request:
          url: "%[1]s/items/{{random_int 1 5000}}"
          headers: {Authorization: "Bearer {{.token}}"}
        think: 1ms
    load: {%[3]s, step_duration: 400ms}
    rules: {latency_budget: 1s}
`, url, capture, load))
}

// countingShop serves the demo target and counts its answers by route and code.
func countingShop(t *testing.T) (string, func(string) int) {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	h := target.New(target.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: 200}
		h.ServeHTTP(rec, r)
		route, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		mu.Lock()
		counts[fmt.Sprintf("%s %d", route, rec.code)]++
		counts[route]++
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func(key string) int {
		mu.Lock()
		defer mu.Unlock()
		return counts[key]
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) { r.code = code; r.ResponseWriter.WriteHeader(code) }

// A flow ramp whose iterations need the captured token: every item request
// carries a valid one, and the figures count iterations and each step.
func TestFlowCarriesTheCapturedToken(t *testing.T) {
	for _, load := range []string{"concurrency: [1, 4]", "rate: [50, 100]"} {
		t.Run(load, func(t *testing.T) {
			url, count := countingShop(t)
			r := Run(context.Background(), shopFlow(t, url, "token", load), Options{})
			if r.Result != result.ResultCompleted || len(r.Steps) != 2 {
				t.Fatalf("run %s with %d steps: %s", r.Result, len(r.Steps), r.Error)
			}
			if n := count("items 401"); n != 0 || count("items 200") == 0 {
				t.Fatalf("items: %d answered 401, %d 200", n, count("items 200"))
			}
			for _, s := range r.Steps {
				if s.ErrorRatio != 0 || s.Attempts == 0 || len(s.Flow) != 2 {
					t.Fatalf("level %g: %d iterations, error ratio %g, flow %+v", s.Level, s.Attempts, s.ErrorRatio, s.Flow)
				}
				login, item := s.Flow[0], s.Flow[1]
				if login.Name != "login" || item.Name != "item" || login.Responses[200] != login.Attempts || item.Responses[200] != item.Attempts {
					t.Errorf("level %g: steps %+v", s.Level, s.Flow)
				}
				// An iteration counts when it started in the window; its
				// item step, a moment later, may fall past it.
				if item.Attempts < s.Attempts-int64(s.Level)-1 || login.Attempts < s.Attempts {
					t.Errorf("level %g: %d iterations, %d logins, %d items", s.Level, s.Attempts, login.Attempts, item.Attempts)
				}
				if item.Latency.P50 <= 0 || s.Latency.P50 < item.Latency.P50 {
					t.Errorf("level %g: iteration p50 %g below the item step's %g", s.Level, s.Latency.P50, item.Latency.P50)
				}
			}
		})
	}
}

// A capture path that finds nothing fails every iteration at step login,
// and step item is never sent.
func TestFlowCaptureThatFindsNothingEndsTheIteration(t *testing.T) {
	url, count := countingShop(t)
	r := Run(context.Background(), shopFlow(t, url, "no.such.path", "concurrency: [2]"), Options{})
	if len(r.Steps) != 1 {
		t.Fatalf("run %s with %d steps: %s", r.Result, len(r.Steps), r.Error)
	}
	s := r.Steps[0]
	if s.Attempts == 0 || s.ErrorRatio != 1 || s.HTTPErrors[200] != s.Attempts {
		t.Errorf("%d iterations, error ratio %g, http errors %v: want every one failed on its 200", s.Attempts, s.ErrorRatio, s.HTTPErrors)
	}
	if login, item := s.Flow[0], s.Flow[1]; login.ErrorRatio != 1 || item.Attempts != 0 {
		t.Errorf("login %+v, item %+v: want login failing, item never sent", login, item)
	}
	if n := count("items"); n != 0 || count("login 200") == 0 {
		t.Errorf("the target saw %d item requests and %d logins", n, count("login 200"))
	}
	if r.BreakingPoints.FirstFailure == nil {
		t.Error("no first failure")
	}
}
