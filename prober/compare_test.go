package prober

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// comparedProbe ramps /work on 127.0.0.1 and compares 127.0.0.2 with it.
func comparedProbe(t *testing.T, load string) *plan.Probe {
	t.Helper()
	cfg, err := config.Parse("c.yml", []byte(`allowed_targets: ["127.0.0.1", "127.0.0.2"]
probes:
  - name: p
    request: {url: "http://127.0.0.1:1/work", timeout: 1s}
    load: `+load+`
    compare: {candidate: "http://127.0.0.2:1"}
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Plans()[0]
}

// simCompare runs p on virtual time, its baseline served by the handler
// base builds in the bubble and its candidate by cand's.
func simCompare(t *testing.T, p *plan.Probe, base, cand func() http.Handler) result.Result {
	t.Helper()
	var r result.Result
	synctest.Test(t, func(*testing.T) {
		opts := Options{noAlarm: true, cpu: func() time.Duration { return 0 }}
		opts.candidate = simWork(candidateOf(p), cand())
		r = run(context.Background(), p, opts, simWork(p, base()), time.Now())
		drain()
	})
	return r
}

// A candidate whose pool works 10% slower fails against its baseline, at
// the same levels, measured in turn; an identical copy does not.
func TestCompareJudgesTheCandidateBesideItsBaseline(t *testing.T) {
	t.Parallel()
	p := comparedProbe(t, "{concurrency: [2, 4], step_duration: 10s}")
	pool := func(work time.Duration) func() http.Handler {
		return demo(target.Options{Workers: 4, WorkTime: work})
	}
	r := simCompare(t, p, pool(20*time.Millisecond), pool(22*time.Millisecond))
	c := r.Compare
	if r.Ended != result.ResultCompleted || c == nil || c.Candidate == nil {
		t.Fatalf("result %s, compare %+v: want a completed run with a comparison", r.Ended, c)
	}
	t.Logf("a candidate 10%% slower: %s, ratio %.3f [%.3f, %.3f]", c.Verdict, c.CapacityRatio, c.Interval[0], c.Interval[1])
	cs := c.Candidate.Steps
	if len(cs) != len(r.Steps) || cs[0].Level != r.Steps[0].Level || cs[1].Level != r.Steps[1].Level {
		t.Fatalf("candidate levels %v, want the baseline's %v", levels(*c.Candidate), levels(r))
	}
	// A B at the first level, B A at the second.
	if !cs[0].Started.After(r.Steps[0].Started) || !cs[1].Started.Before(r.Steps[1].Started) {
		t.Errorf("starts: baseline %v, candidate %v; want the candidate second, then first", r.Steps[0].Started, cs[0].Started)
	}
	if c.Verdict != result.VerdictFail || c.CapacityRatio > 0.93 || c.CapacityRatio < 0.87 || c.Interval[1] >= 0.95 {
		t.Errorf("a candidate 10%% slower: %s, ratio %.3f [%.3f, %.3f]; want fail near 0.91", c.Verdict, c.CapacityRatio, c.Interval[0], c.Interval[1])
	}
	// Its p99 at 4 connections, 10% higher, from the p99 of each second:
	// on virtual time every second reads one p99, and the interval is
	// that point, as near 1.1 as the histograms' buckets allow.
	if l := c.LatencyInterval; c.LatencyRatio == nil || l == nil || !within(l[0], 1.1, 0.02) || !within(l[1], 1.1, 0.02) {
		t.Errorf("latency ratio %v %v, want an interval about 1.1", c.LatencyRatio, l)
	} else {
		t.Logf("its p99: %.3f [%.3f, %.3f]", *c.LatencyRatio, l[0], l[1])
	}
	if d := strings.Join(r.Diagnosis, "\n"); !strings.Contains(d, "compared with the candidate 127.0.0.2:1: fail, its capacity 0.9") || !strings.Contains(d, ", its p99 1.1") {
		t.Errorf("the diagnosis does not say the verdict:\n%s", d)
	}
	same := simCompare(t, p, pool(20*time.Millisecond), pool(20*time.Millisecond))
	if v := same.Compare; v == nil || v.Verdict == result.VerdictFail {
		t.Errorf("two copies of one target: %+v, want no fail", v)
	} else {
		t.Logf("two copies of one target: %s, ratio %.3f [%.3f, %.3f]", v.Verdict, v.CapacityRatio, v.Interval[0], v.Interval[1])
		if l := v.LatencyInterval; l == nil || l[0] > 1 || l[1] < 1 {
			t.Errorf("two copies' p99 interval %v, want one that holds 1", l)
		}
	}
}
