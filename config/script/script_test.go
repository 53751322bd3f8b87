package script

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/plan"
)

func compile(t *testing.T, src string) *Program {
	t.Helper()
	p, err := Compile("test.star", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newCall(names ...string) *plan.ScriptCall {
	return &plan.ScriptCall{At: time.Unix(1700000000, 500e6), Rand: rand.New(rand.NewPCG(1, 2)), Names: names, Values: make([]string, len(names))}
}

// A signed order, as docs/scripts.md shows it: the body built per call,
// its HMAC in a header, the path and query rewritten, a variable set.
func TestBeforeRequestRewritesTheMessage(t *testing.T) {
	t.Setenv("ORDER_KEY", "k3y")
	p := compile(t, `
def before_request(req, vars):
    req.method = "POST"
    req.path = "/orders/" + vars["user"]
    req.query["page"] = str(random_int(2, 2))
    req.body = json.encode({"id": uuid(), "at": now()})
    req.headers["x-signature"] = hmac_sha256(env("ORDER_KEY"), req.body)
    req.headers["Content-Type"] = "application/json"
    vars["order"] = sha256(req.body)
`)
	if got := p.Vars(); len(got) != 1 || got[0] != "order" {
		t.Errorf("Vars() = %q, want [order]", got)
	}
	call := newCall("user", "order")
	call.Values[0] = "ann"
	m := &plan.Message{Method: "GET", Target: "/?a=1", Header: []plan.HeaderField{{Name: "User-Agent", Value: "loadprobe"}}}
	if err := p.BeforeRequest(call, m); err != nil {
		t.Fatal(err)
	}
	if m.Method != "POST" || m.Target != "/orders/ann?a=1&page=2" {
		t.Errorf("message %s %s, want POST /orders/ann?a=1&page=2", m.Method, m.Target)
	}
	header := http.Header{}
	for _, f := range m.Header {
		header.Add(f.Name, f.Value)
	}
	mac := hmac.New(sha256.New, []byte("k3y"))
	mac.Write(m.Body)
	if got := header.Get("X-Signature"); got != hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("X-Signature %q does not sign the body %s", got, m.Body)
	}
	if !strings.Contains(string(m.Body), `"at":1.7000000005e+09`) || header.Get("User-Agent") != "loadprobe" {
		t.Errorf("body %s, header %v", m.Body, header)
	}
	sum := sha256.Sum256(m.Body)
	if call.Values[1] != hex.EncodeToString(sum[:]) {
		t.Errorf("vars[order] = %q", call.Values[1])
	}
}

func TestAfterResponseReadsAndFails(t *testing.T) {
	p := compile(t, `
def after_response(res, vars):
    if res.status != 200:
        fail("status %d" % res.status)
    body = json.decode(res.body)
    if "token" not in body:
        fail("no token in the answer")
    vars["token"] = body["token"] + res.headers["X-Id"]
`)
	call := newCall("token")
	reply := plan.Reply{Status: 200, Header: http.Header{"X-Id": {"7"}}, Body: []byte(`{"token":"abc"}`)}
	if failed, err := p.AfterResponse(call, reply); failed != "" || err != nil || call.Values[0] != "abc7" {
		t.Errorf("AfterResponse = %q, %v, token %q", failed, err, call.Values[0])
	}
	reply.Body = []byte(`{}`)
	if failed, err := p.AfterResponse(call, reply); failed != "no token in the answer" || err != nil {
		t.Errorf("AfterResponse = %q, %v, want the script's reason", failed, err)
	}
	reply.Body = []byte(`not json`)
	if _, err := p.AfterResponse(call, reply); err == nil || !strings.HasPrefix(err.Error(), "test.star:") {
		t.Errorf("a script error %v, want one at its position in test.star", err)
	}
}

func TestCompileErrorsNameFileAndLine(t *testing.T) {
	t.Setenv("SET", "x")
	for _, c := range []struct{ src, want string }{
		{"x = 1\n", "test.star: defines neither before_request(req, vars) nor after_response(res, vars)"},
		{"def before_request(req):\n    pass\n", "before_request must be a function of two parameters"},
		{"load(\"other.star\", \"f\")\ndef before_request(req, vars):\n    pass\n", "test.star:1:1: load is not allowed"},
		{"def before_request(req, vars):\n    req.body = env(\"NOT_SET_ANYWHERE\")\n", "test.star:2:16: environment variable NOT_SET_ANYWHERE is not set"},
		{"def before_request(req, vars):\n    req.body = (\n", "test.star:3:1:"},
		{"x = 1 // 0\ndef before_request(req, vars):\n    pass\n", "test.star:1:7: floored division by zero"},
		{"def before_request(req, vars):\n    open(\"/etc/passwd\")\n", "test.star:2:5: undefined: open"},
	} {
		_, err := Compile("test.star", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// Hostile scripts end their call with an error within their bounds, and
// leave the heap as they found it.
func TestHostileScriptsEndWithinTheirBounds(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		// The step budget or the time bound, whichever comes first: under
		// the race detector 1 000 000 steps can take longer than 100 ms
		// (TestPreciseStepBudgetEndsAnEndlessLoop).
		{"endless loop", "while True:\n        pass", "Starlark computation cancelled"},
		{"1 GiB string", `req.body = "x" * (1 << 30)`, "excessive repeat"},
		{"128 MiB in one step", `req.body = "x" * (1 << 27)`, "memory bound"},
		{"doubling to 4 GiB", "s = \"x\" * (1 << 28)\n    for i in range(4):\n        s = s + s\n    req.body = s", "memory bound"},
		{"deep recursion", "def f(n):\n        return f(n + 1)\n    f(0)", "called recursively"},
		{"another host", `req.path = "http://elsewhere.example/"`, "cannot send to another host"},
		{"a header with a newline", `req.headers["X"] = "a\r\nEvil: 1"`, "control character"},
		{"an unknown variable", `vars["nope" + str(1)] = "x"`, "not a name the probe knows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := compile(t, "def before_request(req, vars):\n    "+c.body+"\n")
			start := time.Now()
			err := p.BeforeRequest(newCall(), &plan.Message{Method: "GET", Target: "/"})
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			t.Logf("%s: %v after %v", c.name, err, took)
			runtime.GC()
			if heap := heapBytes(); heap > 256<<20 {
				t.Errorf("heap %d MiB after the call", heap>>20)
			}
		})
	}
}

// The step budget ends an endless loop: 1 000 000 steps take milliseconds,
// well within the time bound, without the race detector (the Makefile's
// PLAIN_TESTS), whose instrumentation can slow them past it.
func TestPreciseStepBudgetEndsAnEndlessLoop(t *testing.T) {
	p := compile(t, "def before_request(req, vars):\n    while True:\n        pass\n")
	err := p.BeforeRequest(newCall(), &plan.Message{Method: "GET", Target: "/"})
	if err == nil || !strings.Contains(err.Error(), "too many steps") {
		t.Fatalf("error %v, want the step budget's: too many steps", err)
	}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
