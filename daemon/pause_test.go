package daemon

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// arrivals is a target that answers after 2ms and keeps when its last
// request came.
type arrivals struct{ last, count atomic.Int64 }

func (a *arrivals) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	a.last.Store(time.Now().UnixNano())
	a.count.Add(1)
	time.Sleep(2 * time.Millisecond)
}

func (a *arrivals) lastAt() time.Time { return time.Unix(0, a.last.Load()) }

const pauseConfig = `allowed_targets: ["127.0.0.1"]
probes:
  - name: ramp
    request: {url: %q}
    load: {concurrency: [1, 2, 4, 8], step_duration: 2s}
`

func TestPauseStopsAllLoadUntilResumed(t *testing.T) {
	target := &arrivals{}
	srv := httptest.NewServer(target)
	defer srv.Close()
	dir := t.TempDir()
	td := startDaemonWith(t, fmt.Sprintf(pauseConfig, srv.URL), daemonOptions{lifecycle: true, storage: dir, target: srv.URL})
	testkit.WaitFor(t, "the ramp's second step", func() bool { return target.count.Load() > 0 && time.Since(target.lastAt()) < 100*time.Millisecond })
	time.Sleep(2500 * time.Millisecond) // into the second level

	posted := time.Now()
	if code, body := td.do(t, http.MethodPost, "/-/pause"); code != http.StatusOK {
		t.Fatalf("POST /-/pause: %d %s", code, body)
	}
	testkit.WaitFor(t, "the paused run to end", func() bool { return runsTotal(t, td, result.ResultAborted) == 1 })
	time.Sleep(1500 * time.Millisecond) // room for a request that should not come
	last := target.lastAt().Sub(posted)
	t.Logf("last request %s after POST /-/pause", last)
	if last > time.Second {
		t.Errorf("a request left %s after POST /-/pause, want none after 1s", last)
	}
	m := td.get(t, "/metrics")
	testkit.Contains(t, "/metrics while paused", m, "loadprobe_paused 1", `loadprobe_running{probe="ramp"} 0`)
	testkit.Contains(t, "the status page while paused", td.get(t, "/"), `<h1>loadprobe <span class="paused" id="paused">paused</span></h1>`, `<td class="state">paused</td>`)
	rs := td.results(t)
	if len(rs) != 1 || rs[0].Abort == nil || rs[0].Abort.By != result.ByPause || rs[0].Abort.Level != 2 || len(rs[0].Steps) != 2 || !rs[0].Steps[1].Cut {
		t.Fatalf("results %+v: want the run aborted by pause at level 2, its level-2 step cut", rs)
	}

	held := target.count.Load()
	if code, body := td.do(t, http.MethodPost, "/-/resume"); code != http.StatusOK {
		t.Fatalf("POST /-/resume: %d %s", code, body)
	}
	testkit.WaitFor(t, "load after the resume", func() bool { return target.count.Load() > held })
	m = td.get(t, "/metrics")
	testkit.Contains(t, "/metrics after the resume", m, "loadprobe_paused 0", `loadprobe_running{probe="ramp"} 1`)
	testkit.Lacks(t, "the status page after the resume", td.get(t, "/"), `id="paused"`)

	// Paused again, the switch outlives a restart on the same storage.
	td.do(t, http.MethodPost, "/-/pause")
	td.stop(t)
	held = target.count.Load()
	again := startDaemonWith(t, fmt.Sprintf(pauseConfig, srv.URL), daemonOptions{lifecycle: true, storage: dir, target: srv.URL})
	time.Sleep(time.Second)
	if n := target.count.Load() - held; n != 0 {
		t.Errorf("%d requests after a restart paused", n)
	}
	testkit.Contains(t, "/metrics after a paused restart", again.get(t, "/metrics"), "loadprobe_paused 1")
	if !strings.Contains(again.get(t, "/"), `id="paused"`) {
		t.Error("the restarted daemon's status page does not say it is paused")
	}
}

func TestStartedPaused(t *testing.T) {
	target := &arrivals{}
	srv := httptest.NewServer(target)
	defer srv.Close()
	td := startDaemonWith(t, fmt.Sprintf(pauseConfig, srv.URL), daemonOptions{lifecycle: true, paused: true, target: srv.URL})
	time.Sleep(time.Second)
	if n := target.count.Load(); n != 0 {
		t.Fatalf("%d requests from a daemon started with --paused", n)
	}
	testkit.Contains(t, "/metrics", td.get(t, "/metrics"), "loadprobe_paused 1")
	td.do(t, http.MethodPost, "/-/resume")
	testkit.WaitFor(t, "load after the resume", func() bool { return target.count.Load() > 0 })
}

// A page on another origin cannot pause, resume, reload or start runs
// through a visitor's browser: the request a browser marks as cross-origin
// is refused, and nothing changes; a client that sends no such marks
// (curl, a script) is served.
func TestLifecycleRefusesOtherOrigins(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, testkit.GoodConfig, true)
	for _, path := range []string{"/-/pause", "/-/resume", "/-/reload", "/api/v1/probes/work/run"} {
		for name, headers := range map[string]map[string]string{
			"cross-site fetch":     {"Sec-Fetch-Site": "cross-site"},
			"same-site other port": {"Sec-Fetch-Site": "same-site"},
			"foreign Origin":       {"Origin": "http://evil.example"},
		} {
			req, _ := http.NewRequest(http.MethodPost, td.url+path, strings.NewReader("x=1"))
			req.Header.Set("Content-Type", "text/plain")
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s, %s: %d, want 403", path, name, resp.StatusCode)
			}
		}
	}
	testkit.Contains(t, "/metrics after refused pauses", td.get(t, "/metrics"), "loadprobe_paused 0")
	if code, body := td.do(t, http.MethodPost, "/-/pause"); code != http.StatusOK {
		t.Errorf("POST /-/pause without browser marks: %d %s, want 200", code, body)
	}
	testkit.Contains(t, "/metrics after a plain POST /-/pause", td.get(t, "/metrics"), "loadprobe_paused 1")
}
