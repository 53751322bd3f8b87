package daemon

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule"
)

// fleetConfig is n probes, each against its own demo target on 127.0.0.10
// upwards, half open loop and half closed loop, in one long step each.
func fleetConfig(t *testing.T, n int, step string) string {
	t.Helper()
	var b strings.Builder
	// All n run at once, each on its host: these tests are about many runs
	// under way together, not about max_parallel_runs.
	fmt.Fprintf(&b, "allowed_targets: [\"127.0.0.*\"]\nmax_parallel_runs: %d\nprobes:\n", n)
	for i := range n {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", 10+i))
		if err != nil {
			t.Fatalf("listening on a second loopback address: %v", err)
		}
		srv := httptest.NewUnstartedServer(target.New(target.Options{}))
		srv.Listener.Close()
		srv.Listener = l
		srv.Start()
		t.Cleanup(srv.Close)
		load := "rate: [2]"
		if i%2 == 1 {
			load = "concurrency: [1]"
		}
		fmt.Fprintf(&b, "  - name: p%d\n    request: {url: %q}\n    load: {%s, step_duration: %s}\n", i, srv.URL+"/delay?ms=5", load, step)
	}
	return b.String()
}

// sumOf adds up the metric family's series (with the given result label,
// when res is not empty) in the daemon's registry, which answers after the
// daemon stopped too.
func sumOf(t *testing.T, td *testDaemon, family, res string) float64 {
	t.Helper()
	mfs, err := td.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			if res != "" && !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == "result" && l.GetValue() == res
			}) {
				continue
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

func runsTotal(t *testing.T, td *testDaemon, res result.RunResult) float64 {
	return sumOf(t, td, "loadprobe_runs_total", string(res))
}

// waitRunning waits until n probes have a run under way.
func (td *testDaemon) waitRunning(t *testing.T, n int) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("%d runs under way", n), func() bool { return sumOf(t, td, "loadprobe_running", "") == float64(n) })
}

// Runs stopped mid-step, by shutdown or by a reload that changes their
// probes, are canceled: never counted as completed, never stored, never
// the last result. Issue 15 saw 24-29 of 30 such open-loop runs saved as
// completed; the race showed with many probes only, so: 30 probes, open
// and closed loop, a few rounds.
func TestStoppedMidStepIsCanceled(t *testing.T) {
	const probes = 30
	cfg := fleetConfig(t, probes, "10s")
	for round := range 3 {
		dir := t.TempDir()
		td := startDaemonWith(t, cfg, daemonOptions{storage: dir, target: "unused"})
		td.waitRunning(t, probes)

		// A reload that changes every probe cancels every run under way.
		td.write(t, strings.ReplaceAll(cfg, "step_duration: 10s", "step_duration: 11s"))
		td.hup <- syscall.SIGHUP
		testkit.WaitFor(t, "the reload's cancels", func() bool { return runsTotal(t, td, result.ResultCanceled) == probes })
		td.waitRunning(t, probes)

		td.stop(t) // and shutdown cancels the new ones
		if c, n := runsTotal(t, td, result.ResultCompleted), runsTotal(t, td, result.ResultCanceled); c != 0 || n != 2*probes {
			t.Errorf("round %d: runs_total completed %g, canceled %g; want 0 and %d", round, c, n, 2*probes)
		}
		for _, st := range td.sched.Snapshot() {
			if st.Last != nil {
				t.Errorf("round %d: %s's last run is a %s run of %.2fs", round, st.Probe.Name, st.Last.Ended, st.Last.DurationSeconds)
			}
		}
		store, err := schedule.NewStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		if kept, err := store.Load(); err != nil || len(kept) != 0 {
			t.Errorf("round %d: the store holds %d runs (%v), want none", round, len(kept), err)
		}
	}
}

// holdingTarget answers every request with 101 Switching Protocols and
// then holds the connection open without a byte more, until the test ends;
// held receives a value for each connection it holds.
func holdingTarget(t *testing.T) (url string, held <-chan struct{}) {
	t.Helper()
	release, holding := make(chan struct{}), make(chan struct{}, 100)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprint(buf, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		buf.Flush()
		select {
		case holding <- struct{}{}:
		default:
		}
		<-release
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL, holding
}

// SIGTERM ends the daemon whatever its runs are waiting for: here every
// attempt is held by a server that answered 101 and says nothing more,
// over net/http (follow_redirects; https alone now takes the lean
// client). The run under way ends canceled.
func TestShutdownDuringAHeldResponse(t *testing.T) {
	url, held := holdingTarget(t)
	td := startDaemonWith(t, `allowed_targets: ["127.0.0.1"]
probes:
  - name: held
    request:
      url: `+url+`/
      timeout: 30s
      follow_redirects: true
      tls_config: {insecure_skip_verify: true}
    load: {concurrency: [2], step_duration: 30s}
`, daemonOptions{target: "unused"})
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("no attempt reached the holding server within 10s")
	}
	td.stop(t) // fails the test unless Run returns within 5s
	if n := runsTotal(t, td, result.ResultCanceled); n != 1 {
		t.Errorf("runs_total canceled %g, want the held run", n)
	}
}
