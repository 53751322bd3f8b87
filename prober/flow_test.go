package prober

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
)

// shopFlow is the two-step flow of the demo target's shop: log in, take
// the token, fetch an item with it. capture is the JSON path of the token.
func shopFlow(t *testing.T, url, capture, load string) *plan.Probe {
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
			r := mustRun(t, context.Background(), shopFlow(t, url, "token", load), Options{})
			if r.Ended != result.ResultCompleted || len(r.Steps) != 2 {
				t.Fatalf("run %s with %d steps: %s", r.Ended, len(r.Steps), r.Error)
			}
			if n := count("items 401"); n != 0 || count("items 200") == 0 {
				t.Fatalf("items: %d answered 401, %d 200", n, count("items 200"))
			}
			// Neither a data row nor a captured token (user0001.<hmac>) is in the result.
			if out, _ := json.Marshal(r); strings.Contains(string(out), "user0") {
				t.Errorf("the result shows a data row or a captured value:\n%s", out)
			}
			for _, s := range r.Steps {
				if s.ErrorRatio != 0 || s.Attempts == 0 || len(s.Flow) != 2 {
					t.Fatalf("level %g: %d iterations, error ratio %g, flow %+v", s.Level, s.Attempts, s.ErrorRatio, s.Flow)
				}
				login, item := s.Flow[0], s.Flow[1]
				if login.Name != "login" || item.Name != "item" || login.Responses[result.HTTPStatus(200)] != login.Attempts || item.Responses[result.HTTPStatus(200)] != item.Attempts {
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
	r := mustRun(t, context.Background(), shopFlow(t, url, "no.such.path", "concurrency: [2]"), Options{})
	if len(r.Steps) != 1 {
		t.Fatalf("run %s with %d steps: %s", r.Ended, len(r.Steps), r.Error)
	}
	s := r.Steps[0]
	if s.Attempts == 0 || s.ErrorRatio != 1 || s.HTTPErrors[result.HTTPStatus(200)] != s.Attempts {
		t.Errorf("%d iterations, error ratio %g, http errors %v: want every one failed on its 200", s.Attempts, s.ErrorRatio, s.HTTPErrors)
	}
	if login := s.Flow[0]; login.CaptureMisses[result.HTTPStatus(200)] != login.Attempts {
		t.Errorf("login: %d capture misses on 200 of %d attempts", login.CaptureMisses[result.HTTPStatus(200)], login.Attempts)
	}
	want := `first failure at 2 connections: step "login", its capture found nothing in 100% of attempts`
	if !slices.Contains(r.Diagnosis, want) {
		t.Errorf("diagnosis lacks %q:\n%v", want, r.Diagnosis)
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

// BenchmarkFlowStep measures what a flow adds per step: the same request
// sent as a plain probe's attempt, as a one-step flow and as each step of
// a two-step flow, over a kept-alive connection to a server that costs
// next to nothing. Per-step overhead = flow ns/op ÷ steps − plain ns/op.
func BenchmarkFlowStep(b *testing.B) {
	s := testkit.NewServer(b, testkit.FixedServer)
	step := func(name string) string {
		return fmt.Sprintf("      - name: %s\n        request: {url: %q}\n", name, s.URL)
	}
	for _, bc := range []struct{ name, probe string }{
		{"plain", fmt.Sprintf("    request: {url: %q}\n", s.URL)},
		{"flow-1-step", "    flow:\n" + step("a")},
		{"flow-2-steps", "    flow:\n" + step("a") + step("b")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := templatedProbe(b, `allowed_targets: ["127.0.0.1"]
probes:
  - name: bench
`+bc.probe+`    load: {concurrency: [1]}
`)
			w, err := newWorkload(context.Background(), p, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer w.close()
			u := w.newUser()
			defer u.close()
			steps := recordingSteps(w) // a level under way: every step is recorded
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				if _, o, _ := u.do(time.Now().Add(5*time.Second), steps); o != result.Success {
					b.Fatalf("outcome %v", o)
				}
			}
			testkit.ReportCPU(b, cpu)
		})
	}
}

// nopConn answers every attempt at once, for the engine's own cost.
type nopConn struct{}

func (nopConn) Do(time.Time) (result.Code, result.Outcome) {
	return result.HTTPStatus(200), result.Success
}
func (nopConn) Close() {}

// BenchmarkFlowStepOverhead is the flow engine's own work per step, with
// connections that answer at once: the clock read around the step, its
// index, the step's figures.
func BenchmarkFlowStepOverhead(b *testing.B) {
	const steps = 4
	f := &flow{src: &varSource{}}
	u := &flowUser{f: f, vars: template.NewVars(0)}
	for i := range steps {
		f.spec = append(f.spec, flowStep{name: fmt.Sprint(i)})
		u.steps = append(u.steps, &exchange{conn: nopConn{}})
	}
	observe := recordingSteps(f)
	b.ReportAllocs()
	for b.Loop() {
		u.do(time.Time{}, observe)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
}

// recordingSteps records the step attempts of w's users as a level's
// measured window records them, from now on.
func recordingSteps(w workload) stepObserver {
	e := &engine{ctx: context.Background(), live: live.Nop{}}
	for range w.steps() {
		e.steps = append(e.steps, live.Nop{})
	}
	rec := newStepRecorder(len(e.steps), false)
	rec.within(time.Hour)
	return e.stepObserver(rec, time.Now())
}

// The flow example of docs/templates.md, examples/shop.yml, runs against the demo
// target as written: only the target's address and the ramp's length are
// changed here.
func TestShopExampleRuns(t *testing.T) {
	text, err := os.ReadFile("../examples/shop.yml")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile("../docs/templates.md")
	if err != nil {
		t.Fatal(err)
	}
	example := string(text[strings.Index(string(text), "allowed_targets"):])
	if !strings.Contains(string(page), "```yaml\n"+example+"```") {
		t.Errorf("docs/templates.md does not show examples/shop.yml as it is:\n%s", example)
	}
	url, count := countingShop(t)
	yml := strings.ReplaceAll(example, "http://127.0.0.1:8080", url)
	yml = strings.Replace(yml, "concurrency: [1, 2, 4, 8, 16], step_duration: 2s", "concurrency: [1, 4], step_duration: 300ms", 1)
	r := mustRun(t, context.Background(), templatedProbe(t, yml), Options{})
	if r.Ended != result.ResultCompleted || len(r.Steps) != 2 || r.Steps[1].ErrorRatio != 0 || len(r.Steps[1].Flow) != 2 {
		t.Fatalf("run %s: %+v", r.Ended, r.Steps)
	}
	if count("items 200") == 0 || count("items 401") != 0 {
		t.Errorf("items: %d answered 200, %d 401", count("items 200"), count("items 401"))
	}
}

// stepLive counts the live attempts by step ("" for the probe's own).
type stepLive struct {
	live.Nop
	mu     *sync.Mutex
	counts map[string]int
	step   string
}

func (l stepLive) Attempt(result.Outcome, result.Code, float64) {
	l.mu.Lock()
	l.counts[l.step]++
	l.mu.Unlock()
}

func (l stepLive) Step(name string) live.Sink { l.step = name; return l }

// The live request families count a flow's requests by step, not its
// iterations: what the target saw.
func TestFlowLiveCountsRequestsByStep(t *testing.T) {
	url, count := countingShop(t)
	live := stepLive{mu: &sync.Mutex{}, counts: map[string]int{}}
	mustRun(t, context.Background(), shopFlow(t, url, "token", "concurrency: [2]"), Options{Live: live})
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.counts[""] != 0 || live.counts["login"] != count("login") || live.counts["item"] != count("items") {
		t.Errorf("live attempts by step %v; the target saw %d logins and %d items", live.counts, count("login"), count("items"))
	}
}

// A virtual user who thinks is busy: a closed-loop flow with think time
// holds its level (Little's law over the whole iteration), though its
// latency leaves the think time out.
func TestFlowThinkTimeHoldsTheLevel(t *testing.T) {
	url, _ := countingShop(t)
	p := shopFlow(t, url, "token", "concurrency: [2]")
	p.Flow[1].Think = &plan.Think{Min: 20 * time.Millisecond, Max: 20 * time.Millisecond}
	r := mustRun(t, context.Background(), p, Options{})
	if len(r.Steps) != 1 {
		t.Fatalf("run %s: %s", r.Ended, r.Error)
	}
	s := r.Steps[0]
	if s.LoadHeldRatio < 0.8 || s.LoadHeldRatio > 1.1 {
		t.Errorf("load held %g at 2 users thinking 20ms per iteration, want about 1", s.LoadHeldRatio)
	}
	if s.Latency.P50 >= 0.020 {
		t.Errorf("iteration p50 %gs includes the 20ms think time", s.Latency.P50)
	}
}
