package daemon

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// scrapingPrometheus answers the fleet reader's two instant queries as a
// Prometheus that scrapes the daemon at *daemon would, every gauge and
// summary of its /metrics labelled job="lp", instance="lp-0"; spoil may
// change the samples before they are answered.
func scrapingPrometheus(t *testing.T, daemon *atomic.Pointer[string], spoil func(model.Vector)) string {
	t.Helper()
	info := regexp.MustCompile(`^loadprobe_shard_info\{shards="1"\}$`)
	steps := regexp.MustCompile(`^\{__name__=~"loadprobe_step_\.\+",probe="work"\}$`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.FormValue("query")
		var out model.Vector
		for _, s := range scrape(t, *daemon.Load()) {
			name := string(s.Metric[model.MetricNameLabel])
			if (info.MatchString(q) && name == "loadprobe_shard_info") || (steps.MatchString(q) && strings.HasPrefix(name, "loadprobe_step_") && s.Metric["probe"] == "work") {
				out = append(out, s)
			}
		}
		spoil(out)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": out}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// scrape reads the gauges and summaries of the daemon's /metrics as
// Prometheus stores them.
func scrape(t *testing.T, url string) model.Vector {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Error(err)
		return nil
	}
	var v model.Vector
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			base := model.Metric{model.JobLabel: "lp", model.InstanceLabel: "lp-0"}
			for _, l := range m.GetLabel() {
				base[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
			}
			add := func(name string, value float64, extra ...string) {
				mm := base.Clone()
				mm[model.MetricNameLabel] = model.LabelValue(name)
				for i := 0; i < len(extra); i += 2 {
					mm[model.LabelName(extra[i])] = model.LabelValue(extra[i+1])
				}
				v = append(v, &model.Sample{Metric: mm, Value: model.SampleValue(value)})
			}
			switch mf.GetType() {
			case dto.MetricType_GAUGE:
				add(name, m.GetGauge().GetValue())
			case dto.MetricType_SUMMARY:
				add(name+"_count", float64(m.GetSummary().GetSampleCount()))
				add(name+"_sum", m.GetSummary().GetSampleSum())
				for _, q := range m.GetSummary().GetQuantile() {
					add(name, q.GetValue(), "quantile", fmt.Sprint(q.GetQuantile()))
				}
			}
		}
	}
	return v
}

// answer serves every query with body.
func answer(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A fleet Prometheus that answers NaN, garbage, a matrix or a string, or
// that nothing listens at: the daemon's /api/v1/results stays valid JSON,
// its results file is saved, no fleet figure is exported and its shard is
// not complete, with the reason in the fleet's problems. A Prometheus that
// answers what it scraped gives the fleet's figures.
func TestFleetPrometheusThatCannotBeRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		url     func(t *testing.T, daemon *atomic.Pointer[string]) string
		problem string // "": the fleet's run is whole
	}{
		{"scraped", func(t *testing.T, d *atomic.Pointer[string]) string {
			return scrapingPrometheus(t, d, func(model.Vector) {})
		}, ""},
		{"a NaN goodput", func(t *testing.T, d *atomic.Pointer[string]) string {
			return scrapingPrometheus(t, d, func(v model.Vector) {
				for _, s := range v {
					if s.Metric[model.MetricNameLabel] == "loadprobe_step_goodput" {
						s.Value = model.SampleValue(math.NaN())
					}
				}
			})
		}, "not a finite number"},
		{"garbage", func(t *testing.T, _ *atomic.Pointer[string]) string {
			return answer(t, "<html>a proxy's error page</html>")
		}, "cannot read the fleet's steps"},
		{"a matrix", func(t *testing.T, _ *atomic.Pointer[string]) string {
			return answer(t, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
		}, "not an instant vector"},
		{"a string", func(t *testing.T, _ *atomic.Pointer[string]) string {
			return answer(t, `{"status":"success","data":{"resultType":"string","result":[1700000000,"0"]}}`)
		}, "cannot read the fleet's steps"},
		{"nothing listening", func(*testing.T, *atomic.Pointer[string]) string { return "http://127.0.0.1:1" }, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var daemonURL atomic.Pointer[string]
			dir := t.TempDir()
			td := startDaemonWith(t, testkit.GoodConfig, daemonOptions{storage: dir, fleet: FleetOptions{
				PrometheusURL: tc.url(t, &daemonURL), Wait: 300 * time.Millisecond,
			}})
			daemonURL.Store(&td.url)
			var fleet *result.Fleet
			var own result.Result
			testkit.WaitFor(t, "the fleet's run judged", func() bool {
				body := td.get(t, "/api/v1/results")
				var got struct{ Probes []result.Result }
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					t.Fatalf("/api/v1/results is no JSON (%d bytes): %v", len(body), err)
				}
				if len(got.Probes) == 1 {
					own, fleet = got.Probes[0], got.Probes[0].Fleet
				}
				return fleet != nil
			})
			m := td.get(t, "/metrics")
			if tc.problem == "" {
				// The whole run read: every shard, no problem. Its validity
				// is the rules' verdict on the steps, which a busy machine
				// can make "no" for a load not held (CI, this stop), as it
				// can the replica's own.
				if fleet.Replicas != 1 || len(fleet.Problems) != 0 || len(fleet.MissingShards) != 0 || len(fleet.Steps) != len(own.Steps) {
					t.Errorf("fleet of %d replicas, %d of %d steps, missing %v, problems %q; want the whole run", fleet.Replicas, len(fleet.Steps), len(own.Steps), fleet.MissingShards, fleet.Problems)
				}
				testkit.Contains(t, "/metrics", m, `loadprobe_fleet_shard_complete{probe="work",shard="0"} 1`, `loadprobe_fleet_peak_throughput{probe="work"}`)
			} else {
				if fleet.Valid || len(fleet.Problems) == 0 || !strings.Contains(fleet.Problems[0], tc.problem) || len(fleet.MissingShards) != 1 {
					t.Errorf("fleet valid %v, missing %v, problems %q; want invalid, shard 0 missing, %q named", fleet.Valid, fleet.MissingShards, fleet.Problems, tc.problem)
				}
				testkit.Contains(t, "/metrics", m, `loadprobe_fleet_shard_complete{probe="work",shard="0"} 0`, `loadprobe_fleet_run_valid{probe="work"} 0`)
				testkit.Lacks(t, "/metrics", m, "loadprobe_fleet_peak_throughput{", "loadprobe_fleet_capacity_throughput{", "loadprobe_fleet_breaking_point_level{")
			}
			// The fleet's run is saved right after it is set.
			testkit.WaitFor(t, "the results file saved with the fleet's run", func() bool {
				saved, err := os.ReadFile(filepath.Join(dir, "results.json"))
				return err == nil && json.Valid(saved) && strings.Contains(string(saved), `"fleet"`)
			})
			testkit.Contains(t, "/metrics", td.get(t, "/metrics"), "loadprobe_storage_save_failures_total 0")
		})
	}
}

// loadprobe_shard_info names the config the daemon runs now: a reload of
// another file changes its config_hash.
func TestShardInfoNamesTheConfig(t *testing.T) {
	td := startDaemon(t, testkit.GoodConfig, true)
	hash := regexp.MustCompile(`(?m)^loadprobe_shard_info\{config_hash="([0-9a-f]{16})",shard="0",shards="1"\} 1$`)
	first := hash.FindStringSubmatch(td.get(t, "/metrics"))
	if first == nil || first[1] != td.sc.Get().Hash() {
		t.Fatalf("shard info %q, want the running config's hash %q", first, td.sc.Get().Hash())
	}
	td.write(t, testkit.OtherConfig)
	if code, body := td.do(t, http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, body)
	}
	second := hash.FindStringSubmatch(td.get(t, "/metrics"))
	if second == nil || second[1] == first[1] || second[1] != td.sc.Get().Hash() {
		t.Errorf("after a reload of another file: shard info %q, want the new hash %q", second, td.sc.Get().Hash())
	}
}
