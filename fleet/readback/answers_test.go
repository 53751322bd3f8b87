package readback

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/internal/promapi"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// A shard that exported a value that is not a finite number where the
// sums need one is left out, named with the series: the fleet's run is
// invalid, no figure is judged, and the fleet's run stays writable as
// JSON. A NaN quantile of a step without successes is no such value
// (TestJudgeLeavesOutAShardWithoutSuccesses).
func TestJudgeRejectsAValueThatIsNotANumber(t *testing.T) {
	p := testProbe(t)
	for _, tc := range []struct {
		name, series string
		value        float64
	}{
		{"NaN goodput", "loadprobe_step_goodput", math.NaN()},
		{"+Inf responses", "loadprobe_step_responses", math.Inf(1)},
		{"-Inf p99 of a step with successes", "loadprobe_step_latency_seconds", math.Inf(-1)},
		{"NaN latency count", "loadprobe_step_latency_seconds_count", math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := threeShards(func(int) []result.Step { return shardSteps(runStart, false) })
			var queries atomic.Int32
			url := fakePrometheus(t, func() model.Vector {
				v := vector(t, p, rs, false)
				for _, s := range v {
					if string(s.Metric[model.MetricNameLabel]) == tc.series && s.Metric["level"] == "12" &&
						s.Metric[model.InstanceLabel] == "replica-1:10471" && s.Metric["quantile"] != "0.5" {
						s.Value = model.SampleValue(tc.value)
					}
				}
				return v
			}, &queries)
			own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
			f := reader(t, url, 50*time.Millisecond).Judge(context.Background(), p, own)
			if f.Valid || !slices.Equal(f.MissingShards, []int{1}) || f.Replicas != 2 {
				t.Errorf("valid %v, missing %v, %d replicas; want invalid, shard 1 missing, 2", f.Valid, f.MissingShards, f.Replicas)
			}
			if len(f.Problems) != 1 || !strings.Contains(f.Problems[0], "shard 1 exported "+tc.series) || !strings.Contains(f.Problems[0], "not a finite number") {
				t.Errorf("problems %q, want shard 1's %s named as not a finite number", f.Problems, tc.series)
			}
			if f.Capacity != nil || f.PeakThroughput != 0 || f.BreakingPoints != (result.BreakingPoints{}) {
				t.Errorf("capacity %+v, peak %g, breaking points %+v; want none", f.Capacity, f.PeakThroughput, f.BreakingPoints)
			}
			if _, err := json.Marshal(f); err != nil {
				t.Errorf("the fleet's run does not encode: %v", err)
			}
		})
	}
}

// answering serves every query with status and body.
func answering(status int, body string) func(*testing.T) string {
	return func(t *testing.T) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// closedPort is a loopback address where nothing listens: tcpmux's port,
// which nothing here serves (checked).
func closedPort(t *testing.T) string {
	if c, err := net.Dial("tcp", "127.0.0.1:1"); err == nil {
		c.Close()
		t.Fatal("something listens on 127.0.0.1:1")
	}
	return "http://127.0.0.1:1"
}

// A Prometheus that cannot be read says nothing of the shards: all of
// them count as missing, none complete, and no figure is judged: no peak
// of 0, no capacity, the reason named.
func TestJudgeCannotReadPrometheus(t *testing.T) {
	p := testProbe(t)
	for _, tc := range []struct {
		name    string
		url     func(*testing.T) string
		problem string
	}{
		{"nothing listening", closedPort, "connection refused"},
		{"garbage", answering(http.StatusOK, "<html>not Prometheus</html>"), "cannot read the fleet's steps from Prometheus"},
		{"a matrix", answering(http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[]}}`), "a matrix, not an instant vector"},
		{"a string", answering(http.StatusOK, `{"status":"success","data":{"resultType":"string","result":[1700000000,"x"]}}`), `unexpected value type "string"`},
		{"an error", answering(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"parse error"}`), "parse error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
			f := reader(t, tc.url(t), 50*time.Millisecond).Judge(context.Background(), p, own)
			if f.Valid || !slices.Equal(f.MissingShards, []int{0, 1, 2}) || f.Replicas != 0 {
				t.Errorf("valid %v, missing %v, %d replicas; want invalid, every shard missing, 0", f.Valid, f.MissingShards, f.Replicas)
			}
			if len(f.Problems) != 1 || !strings.Contains(f.Problems[0], tc.problem) {
				t.Errorf("problems %q, want one naming %q", f.Problems, tc.problem)
			}
			if f.Capacity != nil || f.PeakThroughput != 0 || f.BreakingPoints != (result.BreakingPoints{}) {
				t.Errorf("capacity %+v, peak %g, breaking points %+v; want none", f.Capacity, f.PeakThroughput, f.BreakingPoints)
			}
		})
	}
}

// A Prometheus that never answers costs one bounded read: Judge returns
// once its wait is over, and no query is left open.
func TestJudgeBoundsAQueryInTime(t *testing.T) {
	p := testProbe(t)
	var open atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		r.ParseForm() // reads the query, as Prometheus does; then a closed connection ends r's context
		open.Add(1)
		defer open.Add(-1)
		select { // never answers; the client's giving up ends it
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	r := reader(t, srv.URL, 100*time.Millisecond)
	r.timeout = 300 * time.Millisecond
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	done := make(chan *result.Fleet, 1)
	started := time.Now()
	go func() { done <- r.Judge(context.Background(), p, own) }()
	select {
	case f := <-done:
		if len(f.Problems) != 1 || !strings.Contains(f.Problems[0], "deadline exceeded") || len(f.MissingShards) != 3 {
			t.Errorf("problems %q, missing %v; want the timeout named and every shard missing", f.Problems, f.MissingShards)
		}
		t.Logf("Judge returned after %s", time.Since(started).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("Judge still waits for a Prometheus that never answers after 10s")
	}
	deadline := time.Now().Add(5 * time.Second)
	for open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := open.Load(); n > 0 {
		t.Errorf("%d queries still open after Judge returned", n)
	}
}

// An answer larger than promapi.MaxAnswerBytes is not read whole: the
// read fails, naming the bound, and the Prometheus stops being read. The
// answer is four times the bound: the socket's buffers take what was written
// but not read, up to tcp_rmem's and tcp_wmem's maxima (32 MiB and 4 MiB
// here), so an answer 8 MiB past the bound was written whole in a race pass.
func TestJudgeBoundsAnAnswerInSize(t *testing.T) {
	p := testProbe(t)
	const total = 4 * promapi.MaxAnswerBytes
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		sample := `{"metric":{"__name__":"loadprobe_shard_info","shard":"0","shards":"3"},"value":[1700000000,"1"]},`
		n, _ := fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[`)
		for int64(n) < total {
			m, err := fmt.Fprint(w, sample)
			if err != nil {
				break
			}
			n += m
		}
		m, _ := fmt.Fprint(w, `{"metric":{},"value":[1700000000,"1"]}]}}`)
		written.Store(int64(n + m))
	}))
	t.Cleanup(srv.Close)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, srv.URL, 50*time.Millisecond).Judge(context.Background(), p, own)
	if len(f.Problems) != 1 || !strings.Contains(f.Problems[0], "larger than 32 MiB") || len(f.MissingShards) != 3 {
		t.Errorf("problems %.300q, missing %v; want the size bound named and every shard missing", f.Problems, f.MissingShards)
	}
	srv.Close() // waits for the handlers
	if n := written.Load(); n >= total {
		t.Errorf("the Prometheus wrote its whole %d MiB answer, want it cut near %d MiB", n>>20, promapi.MaxAnswerBytes>>20)
	} else {
		t.Logf("the Prometheus wrote %d MiB of its %d MiB answer", n>>20, total>>20)
	}
}

// A replica whose config differs from shard 0's (its config_hash) ran
// other probes or other levels: its share is left out, named, and the
// fleet's run is invalid. Replicas of one config sum as before.
func TestJudgeNamesAReplicaWithAnotherConfig(t *testing.T) {
	p := testProbe(t)
	rs := threeShards(func(int) []result.Step { return shardSteps(runStart, false) })
	for i := range rs {
		rs[i].configHash = "00112233445566aa"
	}
	rs[2].configHash = "ffeeddccbbaa9988"
	var queries atomic.Int32
	url := fakePrometheus(t, func() model.Vector { return vector(t, p, rs, false) }, &queries)
	own := result.Result{Name: p.Name, Mode: plan.ModeConcurrency, Ended: result.ResultCompleted, Steps: shardSteps(runStart, false)}
	f := reader(t, url, 50*time.Millisecond).Judge(context.Background(), p, own)
	if f.Valid || !slices.Equal(f.MissingShards, []int{2}) {
		t.Errorf("valid %v, missing %v; want invalid, shard 2 left out", f.Valid, f.MissingShards)
	}
	if len(f.Problems) != 1 || !strings.Contains(f.Problems[0], `shard 2 of 3 runs another config than shard 0 (config_hash "ffeeddccbbaa9988", shard 0's "00112233445566aa")`) {
		t.Errorf("problems %q, want shard 2's other config named", f.Problems)
	}
	if f.Capacity != nil || f.PeakThroughput != 0 {
		t.Errorf("capacity %+v, peak %g; want none", f.Capacity, f.PeakThroughput)
	}

	rs[2].configHash = rs[0].configHash
	f = reader(t, url, 50*time.Millisecond).Judge(context.Background(), p, own)
	if !f.Valid || f.Replicas != 3 || f.PeakThroughput != 12000 {
		t.Errorf("one config: valid %v, %d replicas, peak %g, problems %q; want valid, 3, 12000", f.Valid, f.Replicas, f.PeakThroughput, f.Problems)
	}
}
