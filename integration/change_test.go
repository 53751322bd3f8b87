package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/internal/realpart"
	lpresult "github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// The capacity change detector on a real daemon: a probe ramps a demo
// target of 4 workers every second or so until its history holds
// changeRunsBefore completed runs; the target restarts with 2 workers on
// the same address, and within changeRunsAfter runs the daemon exports the
// change and Prometheus fires LoadprobeCapacityChanged.

// changeConfig is a short ramp up to the pool's size: no level past its
// capacity, so that no run measures a recovery before the restart.
const changeConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: work
    request: {url: "http://TARGET/work", timeout: 1s}
    load: {concurrency: [1, 2, 4], step_duration: 300ms}
    schedule: {interval: 1s}
`

const (
	// changeRunsBefore is how many runs the history holds before the
	// restart: enough for the permutation test to rule out chance with 3
	// runs after (docs/measurement.md, "Capacity changes").
	changeRunsBefore = 20
	changeRunsAfter  = 3
)

func TestCapacityChangeFiresOnARealDaemon(t *testing.T) {
	promBin := realpart.Find(t, "prometheus", "apt-get install --no-install-recommends prometheus")
	began := time.Now()
	dir := t.TempDir()
	bin := buildLoadprobe(t, dir)

	target := startProc(t, "demo target (4 workers)", dir, bin, "target", "--listen=127.0.0.1:0", "--workers=4", "--work-time=10ms")
	targetAddr := target.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	for _, f := range []string{"rules.yml", "alerts.yml"} {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), shortenWindows(string(raw), guardWindows))
	}
	daemonAddr, promAddr := freePort(t), freePort(t)
	writeFile(t, filepath.Join(dir, "prometheus.yml"), fmt.Sprintf(guardPromConfig, daemonAddr, targetAddr))
	prom := &prometheus{base: "http://" + promAddr}
	prom.proc = startProc(t, "prometheus", dir, promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--rules.alert.resend-delay=1s")
	waitHTTP(t, prom.base+"/-/ready")

	cfgFile := filepath.Join(dir, "loadprobe.yml")
	writeFile(t, cfgFile, strings.ReplaceAll(changeConfig, "TARGET", targetAddr))
	daemon := startProc(t, "loadprobe daemon", dir, bin, "--config.file="+cfgFile, "--web.listen-address="+daemonAddr)
	daemon.waitLogAddr(t, `msg="Listening on" address=(\S+)`)
	runs := recordRuns(t, daemonAddr, began)

	before := runs.waitRestartPoint(t, probeWork, changeRunsBefore, 90*time.Second)
	// The target is steady, the machine under it need not be: a run of
	// CI saw its capacity step from 373/s to 387/s and stay, and the
	// detector reported that step, rightly. What must not happen is a
	// change the alert pages on, or one as large.
	const changeRatio = `loadprobe_capacity_change_ratio{probe="work"}`
	if c, err := prom.scalar(changeRatio+` < 0.95 or `+changeRatio+` > 1.05`, time.Now()); err == nil {
		t.Errorf("a change of %s before the restart, after %d runs on a steady target", c, changeRunsBefore)
	} else if c, err := prom.scalar(changeRatio, time.Now()); err == nil {
		t.Logf("a change within 5%% before the restart (%s)", c)
	}
	target.stop(t)
	target = startProc(t, "demo target (2 workers)", dir, bin, "target", "--listen="+targetAddr, "--workers=2", "--work-time=10ms")
	target.waitLogAddr(t, `msg="demo target listening" address=(\S+)`)
	t.Logf("%d runs before the restart (the last seen at +%.1fs); target restarted with 2 workers at +%.1fs",
		changeRunsBefore, before.SeenAt, since(began))

	prom.waitData(t, `ALERTS{alertname="LoadprobeCapacityChanged",probe="work",alertstate="firing"}`, 40*time.Second)
	// The change as the alert fired: found within changeRunsAfter runs on 2
	// workers (one more may have ended since), at half the capacity.
	read := func(q string) float64 {
		v, err := prom.scalar(q, time.Now())
		f, perr := strconv.ParseFloat(v, 64)
		if err != nil || perr != nil {
			t.Fatalf("%s: %q, %v", q, v, err)
		}
		return f
	}
	ratio, ago := read(changeRatio), read(`loadprobe_capacity_change_runs_ago{probe="work"}`)
	t.Logf("LoadprobeCapacityChanged firing %.1fs after start: change ratio %.3f, %g runs ago", since(began), ratio, ago)
	runs.report(t, probeWork)
	if ago > changeRunsAfter+1 || ratio < 0.4 || ratio > 0.6 {
		t.Errorf("change ratio %.3f, %g runs ago: want about 0.5, found within %d runs", ratio, ago, changeRunsAfter)
	}
}

// seedCapacityChange writes a results file under dir/store, for
// --storage.path, in which probe's history halves its capacity after 10
// runs: the daemon restores it and exports the change at once, so that
// the dashboards test evaluates LoadprobeCapacityChanged on a real series.
// The probe's own runs, appended later, leave the change found.
func seedCapacityChange(t *testing.T, dir, probe string) string {
	t.Helper()
	store := filepath.Join(dir, "store")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-20 * time.Hour)
	var history []state.Run
	var last lpresult.Result
	for i := range 20 {
		capacity := 4000.0
		if i >= 10 {
			capacity = 2000
		}
		capacity += float64(i % 3) // a little noise: no two runs alike
		last = lpresult.Result{Name: probe, Started: started.Add(time.Duration(i) * time.Hour), Ended: lpresult.ResultCompleted,
			Valid: true, Capacity: &lpresult.Point{Level: 16, Throughput: capacity}}
		history = append(history, state.RunOf(last))
	}
	type storedProbe struct {
		Result        lpresult.Result `json:"result"`
		LastCompleted time.Time       `json:"last_completed"`
		History       []state.Run     `json:"history"`
	}
	data, err := json.Marshal(map[string][]storedProbe{"probes": {{Result: last, LastCompleted: last.Started.Add(time.Second), History: history}}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(store, "results.json"), string(data))
	return store
}
