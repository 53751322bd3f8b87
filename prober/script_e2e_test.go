package prober

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// scriptFile writes a script into a directory of the test's, and returns
// its path.
func scriptFile(t testing.TB, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// signScript builds each order's body and signs it with a key read from
// the environment at load (docs/scripts.md, "A signed body").
const signScript = `
def before_request(req, vars):
    req.body = json.encode({"id": uuid(), "qty": random_int(1, 5), "at": now()})
    req.headers["X-Signature"] = hmac_sha256(env("ORDER_KEY"), req.body)
    req.headers["Content-Type"] = "application/json"
`

// A ramp of signed orders on real sockets: the target checks every body's
// HMAC, and every order is a new one.
func TestScriptSignsEveryBody(t *testing.T) {
	t.Setenv("ORDER_KEY", "s3cret")
	var good, bad atomic.Int64
	ids := make(chan string, 1<<16)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := hmac.New(sha256.New, []byte("s3cret"))
		m.Write(body)
		var order struct{ ID string }
		if r.Method != http.MethodPost || !hmac.Equal([]byte(r.Header.Get("X-Signature")), []byte(hex.EncodeToString(m.Sum(nil)))) ||
			json.Unmarshal(body, &order) != nil {
			bad.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		good.Add(1)
		select {
		case ids <- order.ID:
		default:
		}
	}))
	t.Cleanup(s.Close)
	p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: orders
    request: {method: POST, url: "%s/orders", script: %q}
    load: {concurrency: [1, 4], step_duration: 500ms}
`, s.URL, scriptFile(t, "sign.star", signScript)))
	r := mustRun(t, context.Background(), p, Options{})
	if bad.Load() != 0 || good.Load() == 0 {
		t.Errorf("%d orders with a bad signature, %d good", bad.Load(), good.Load())
	}
	for _, st := range r.Steps {
		if st.Attempts == 0 || st.ErrorRatio != 0 || st.ScriptError != "" {
			t.Errorf("level %g: %d attempts, error ratio %g, script error %q", st.Level, st.Attempts, st.ErrorRatio, st.ScriptError)
		}
	}
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("order id %s sent twice", id)
		}
		seen[id] = true
	}
}

// shopScript logs in and takes the token, then lists and reads an item
// with it: the shop flow of docs/scripts.md.
const shopScript = `
def before_request(req, vars):
    if req.path == "/login":
        req.body = json.encode({"user": "u" + str(random_int(1, 1000))})
    else:
        req.headers["Authorization"] = "Bearer " + vars["token"]
        if req.path == "/items/detail":
            req.path = "/items/" + vars["item"]

def after_response(res, vars):
    if res.status != 200:
        return
    if "token" in res.body:
        vars["token"] = json.decode(res.body)["token"]
    else:
        vars["item"] = str(random_int(1, 5000))
`

// scriptedShop is the shop flow driven by shopScript on every step.
func scriptedShop(t testing.TB, url, load string) *plan.Probe {
	script := scriptFile(t, "shop.star", shopScript)
	return templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: shop
    flow:
      - {name: login, request: {method: POST, url: "%[1]s/login", script: %[2]q}}
      - {name: list, request: {url: "%[1]s/items/1", script: %[2]q}}
      - {name: detail, request: {url: "%[1]s/items/detail", script: %[2]q}}
    load: {%[3]s}
`, url, script, load))
}

// The scripted shop flow on real sockets: every step succeeds, so the
// token and the item the script kept reached the next steps.
func TestScriptedFlowCarriesItsVariables(t *testing.T) {
	url, count := countingShop(t)
	r := mustRun(t, context.Background(), scriptedShop(t, url, "concurrency: [2], step_duration: 500ms"), Options{})
	s := r.Steps[0]
	if s.Attempts == 0 || s.ErrorRatio != 0 || s.ScriptError != "" {
		t.Fatalf("%d iterations, error ratio %g, errors %v, script error %q", s.Attempts, s.ErrorRatio, s.Errors, s.ScriptError)
	}
	if n := count("items 200"); int64(n) < 2*s.Attempts {
		t.Errorf("%d items answered for %d iterations", n, s.Attempts)
	}
}

// A script that fails a response fails the attempt as the target's
// failure; one that errs (or grows the heap past its bound) is the
// generator's, and past 1% of a step's attempts makes the run invalid.
func TestScriptOutcomes(t *testing.T) {
	s := testkit.NewServer(t, testkit.FixedServer)
	for _, c := range []struct {
		name, src string
		want      result.Outcome
		valid     bool
	}{
		{"fail", "def after_response(res, vars):\n    fail(\"never good enough\")\n", result.ScriptFailed, true},
		{"error", "def before_request(req, vars):\n    req.body = 1 // 0\n", result.Script, false},
		// One step of 128 MiB: the heap passes the bound as the step
		// begins, whatever the step's speed (under the race detector
		// filling 32 MiB took longer than the time bound).
		{"memory", "def before_request(req, vars):\n    req.body = \"x\" * (1 << 27)\n", result.Script, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: scripted
    request: {url: %q, script: %q}
    load: {concurrency: [1], step_duration: 200ms}
`, s.URL, scriptFile(t, c.name+".star", c.src)))
			r := mustRun(t, context.Background(), p, Options{})
			st := r.Steps[0]
			if st.Attempts == 0 || st.Errors[c.want.String()] != st.Attempts {
				t.Fatalf("%d attempts, errors %v: want every one %s", st.Attempts, st.Errors, c.want)
			}
			if failed := st.ErrorRatio == 1; failed != (c.want == result.ScriptFailed) {
				t.Errorf("error ratio %g for %s", st.ErrorRatio, c.want)
			}
			if r.Valid != c.valid {
				t.Errorf("valid %v, want %v:\n%s", r.Valid, c.valid, strings.Join(r.Diagnosis, "\n"))
			}
			if want := map[string]string{"error": "division by zero", "memory": "the memory bound"}[c.name]; !strings.Contains(st.ScriptError, want) {
				t.Errorf("script error %q, want %q", st.ScriptError, want)
			}
			if want := "erred in"; c.want == result.Script && !strings.Contains(strings.Join(r.Diagnosis, "\n"), want) {
				t.Errorf("diagnosis does not name the script's errors:\n%s", strings.Join(r.Diagnosis, "\n"))
			}
		})
	}
}

// BenchmarkScriptedFlow is the shop flow of login, list and detail against
// the demo target on loopback, written with templates and captures, then
// driven by shopScript on every step: the generator's CPU per iteration
// of each (the in-process target's included, the same for both).
func BenchmarkScriptedFlow(b *testing.B) {
	s := httptest.NewServer(target.New(target.Options{}))
	defer s.Close()
	templated := templatedProbe(b, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: shop
    flow:
      - name: login
        request: {method: POST, url: "%[1]s/login", body: '{"user": "u{{random_int 1 1000}}"}'}
        capture: {token: {json: token}}
      - name: list
        request: {url: "%[1]s/items/1", headers: {Authorization: "Bearer {{.token}}"}}
      - name: detail
        request: {url: "%[1]s/items/{{random_int 1 5000}}", headers: {Authorization: "Bearer {{.token}}"}}
    load: {concurrency: [1]}
`, s.URL))
	for _, bc := range []struct {
		name string
		p    *plan.Probe
	}{{"templates", templated}, {"script", scriptedShop(b, s.URL, "concurrency: [1]")}} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := newWorkload(context.Background(), bc.p, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer w.close()
			u := w.newUser()
			defer u.close()
			steps := recordingSteps(w)
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				if _, o, _ := u.do(time.Now().Add(5*time.Second), steps); o != result.Success {
					b.Fatalf("outcome %v (%s)", o, w.scriptError())
				}
			}
			testkit.ReportCPU(b, cpu)
		})
	}
}

// A later step's template reads a variable an earlier step's script set.
func TestTemplateReadsAScriptVariable(t *testing.T) {
	url, count := countingShop(t)
	script := scriptFile(t, "login.star", `
def before_request(req, vars):
    req.body = json.encode({"user": "ann"})

def after_response(res, vars):
    vars["token"] = json.decode(res.body)["token"]
`)
	p := templatedProbe(t, fmt.Sprintf(`allowed_targets: ["127.0.0.1"]
probes:
  - name: shop
    flow:
      - {name: login, request: {method: POST, url: "%[1]s/login", script: %[2]q}}
      - {name: item, request: {url: "%[1]s/items/7", headers: {Authorization: "Bearer {{.token}}"}}}
    load: {concurrency: [1], step_duration: 300ms}
`, url, script))
	r := mustRun(t, context.Background(), p, Options{})
	if s := r.Steps[0]; s.Attempts == 0 || s.ErrorRatio != 0 || count("items 200") == 0 {
		t.Errorf("%d iterations, error ratio %g, errors %v, %d items answered", s.Attempts, s.ErrorRatio, s.Errors, count("items 200"))
	}
}
