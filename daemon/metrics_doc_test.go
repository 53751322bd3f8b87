package daemon

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/result"
)

// metricsDocConfig runs one short probe of each kind against the test's
// demo target (TARGET stands for its host and port): a closed-loop ramp
// past the knee of /work's 4 workers, with an expectation and a live guard
// that never fires; a ramp of /shed past the 8 requests it holds, whose
// first failure bounds its bottleneck whatever the machine does to its
// knee (a ramp of /work that a busy machine sped up reached its peak at its
// last level, so it had no knee, and no bottleneck was served); a ramp of
// /scale, which follows the scalability law, so that the model's families
// are served (steps of 1s: of 300ms, a busy machine's stalls moved levels
// by up to 30% and the fit was refused as poor); an open loop; a flow; a
// WebSocket ramp past the 8 sessions /ws-limited holds, so that a close
// code is counted; a ramp compared with a copy of itself; and a gRPC
// stream whose 5 ms timeout ends it before Echo's 10 ms of work answers,
// so that its end is counted (GRPC stands for the demo service). The closed
// and shed ramps read their target's telemetry from a fake Prometheus
// (PROM), and the closed one starts from a stored history whose capacity
// fell (capacityFell). A family served only under another config needs a
// probe here that makes the daemon serve it.
const metricsDocConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: closed
    request: {url: "http://TARGET/work"}
    load: {concurrency: [1, 2, 4, 8, 16, 32], step_duration: 300ms}
    expect: {min_capacity: 1}
    guard: {window: 100ms, error_ratio: 0.99}
    telemetry:
      prometheus: {url: "PROM"}
      traffic: traffic
  - name: shed
    request: {url: "http://TARGET/shed"}
    load: {concurrency: [4, 16], step_duration: 300ms}
    telemetry:
      prometheus: {url: "PROM"}
      saturation: [{name: workers, query: workers}]
  - name: scale
    request: {url: "http://TARGET/scale"}
    load: {concurrency: [1, 2, 4, 8, 16, 24, 32, 48], step_duration: 1s}
  - name: open
    request: {url: "http://TARGET/noop"}
    load: {rate: [20, 40], step_duration: 300ms}
  - name: shop
    flow:
      - name: login
        request: {method: POST, url: "http://TARGET/login", body: '{"user": "u{{index}}"}'}
        capture: {token: {json: token}}
      - name: item
        request:
          url: "http://TARGET/items/{{random_int 1 50}}"
          headers: {Authorization: "Bearer {{.token}}"}
    load: {concurrency: [1, 2], step_duration: 300ms}
  - name: ws
    request: {url: "ws://TARGET/ws-limited", body: ping}
    load: {concurrency: [8, 9], step_duration: 300ms}
  - name: compared
    request: {url: "http://TARGET/noop"}
    load: {concurrency: [1, 2], step_duration: 300ms}
    compare: {candidate: "http://TARGET"}
  - name: stream
    request:
      url: grpc://GRPC
      timeout: 5ms
      grpc: {method: loadprobe.demo.v1.Target/Echo, stream: {kind: bidi, messages_per_second: 100}}
    load: {concurrency: [1], step_duration: 300ms}
`

// documented is one family as docs/metrics.md describes it.
type documented struct {
	typ    string
	labels []string
}

// docRow is a row of a metrics table: | `name` | type | labels | meaning |.
var docRow = regexp.MustCompile("(?m)^\\| `(loadprobe_[a-z0-9_]+)` \\| ([a-z]+) \\|([a-z_, ]*)\\|")

func readMetricsDoc(t *testing.T) map[string]documented {
	t.Helper()
	text, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]documented{}
	for _, m := range docRow.FindAllStringSubmatch(string(text), -1) {
		if _, dup := docs[m[1]]; dup {
			t.Errorf("docs/metrics.md describes %s twice", m[1])
		}
		var labels []string
		for _, l := range strings.Split(m[3], ",") {
			// A summary's quantile is a label of its samples in the
			// exposition, not of the family as a parser returns it.
			if l = strings.TrimSpace(l); l != "" && l != "quantile" {
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
		docs[m[1]] = documented{typ: m[2], labels: labels}
	}
	if len(docs) == 0 {
		t.Fatal("docs/metrics.md has no metric table rows")
	}
	return docs
}

// served parses a scrape into the loadprobe_ families it holds, with the
// union of their samples' labels.
func served(t *testing.T, scrape string) map[string]documented {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(scrape))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	out := map[string]documented{}
	for name, f := range families {
		if !strings.HasPrefix(name, "loadprobe_") {
			continue
		}
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		out[name] = documented{typ: strings.ToLower(f.GetType().String()), labels: slices.Sorted(maps.Keys(labels))}
	}
	return out
}

// The metrics reference is what a daemon serves: after one run of each
// kind of probe, every loadprobe_ family on /metrics is documented in
// docs/metrics.md with its type and labels, and every family documented is
// served. The fleet's own figures are served only by replica 0 of a fleet
// that reads its shards back from a Prometheus; those are checked against
// the families the collector registers for it instead.
func TestMetricsReferenceMatchesWhatIsServed(t *testing.T) {
	t.Parallel()
	base := demoTarget(t)
	prom := testkit.FakePrometheus(t, map[string][]testkit.Series{
		"traffic": {func(time.Time) (float64, bool) { return 10, true }},
		"workers": {func(time.Time) (float64, bool) { return 1, true }},
	}, nil)
	grpcAddr := make(chan string, 1)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() {
		_ = target.ServeGRPC(ctx, "127.0.0.1:0", target.Options{}, nil, func(a net.Addr) { grpcAddr <- a.String() })
	}()
	cfg := strings.NewReplacer("TARGET", strings.TrimPrefix(base, "http://"), "PROM", prom.URL, "GRPC", <-grpcAddr).Replace(metricsDocConfig)
	storage := t.TempDir()
	testkit.WriteFile(t, filepath.Join(storage, "results.json"), capacityFell(t))
	td := startDaemonWith(t, cfg, daemonOptions{target: base, storage: storage})
	for _, p := range []string{"closed", "shed", "scale", "open", "shop", "ws", "compared", "stream"} {
		td.waitRun(t, p, 1)
	}
	got := served(t, td.get(t, "/metrics"))
	for name, f := range fleetFamilies(t) {
		if _, ok := got[name]; ok {
			t.Errorf("%s is served by a daemon without a fleet: it is not replica 0's alone", name)
		}
		got[name] = f
	}

	docs := readMetricsDoc(t)
	for _, name := range slices.Sorted(maps.Keys(got)) {
		d, ok := docs[name]
		switch {
		case !ok:
			t.Errorf("%s is served but not documented in docs/metrics.md", name)
		case d.typ != got[name].typ:
			t.Errorf("%s: docs/metrics.md says %s, /metrics serves a %s", name, d.typ, got[name].typ)
		case !slices.Equal(d.labels, got[name].labels):
			t.Errorf("%s: docs/metrics.md lists labels %v, /metrics serves %v", name, d.labels, got[name].labels)
		}
	}
	missing := false
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is documented in docs/metrics.md but not served", name)
			missing = true
		}
	}
	if missing {
		t.Logf("the runs that did not serve it:\n%s", td.get(t, "/api/v1/results"))
	}
}

// capacityFell is a store whose history of the closed probe holds 20 runs
// at 1000/s, then 4 at 500/s: a change of its capacity, 4 runs ago.
func capacityFell(t *testing.T) string {
	t.Helper()
	type run struct {
		Started  time.Time     `json:"started"`
		Ended    string        `json:"result"`
		Valid    bool          `json:"valid"`
		Capacity *result.Point `json:"capacity"`
	}
	var history []run
	start := time.Now().Add(-24 * time.Hour)
	for i := range 24 {
		c := 1000.0 + float64(i%3)
		if i >= 20 {
			c /= 2
		}
		history = append(history, run{start.Add(time.Duration(i) * time.Hour), "completed", true, &result.Point{Level: 4, Throughput: c}})
	}
	last := result.Result{Name: "closed", Ended: result.ResultCompleted, Started: history[23].Started, Valid: true}
	b, err := json.Marshal(map[string]any{"probes": []any{map[string]any{"result": last, "last_completed": history[23].Started, "history": history}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fleetFamilies are the loadprobe_fleet_ families the collector registers
// for a fleet's replica 0, with their labels; every one is a gauge.
func fleetFamilies(t *testing.T) map[string]documented {
	t.Helper()
	var reg describer
	collector.RegisterFleet(&reg, nil, fleet.Shard{})
	out := map[string]documented{}
	for _, d := range reg.descs {
		m := descName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		if !strings.HasPrefix(m[1], "loadprobe_fleet_") {
			continue
		}
		labels := strings.Fields(strings.NewReplacer("{", " ", "}", " ", ",", " ").Replace(m[2]))
		slices.Sort(labels)
		out[m[1]] = documented{typ: "gauge", labels: labels}
	}
	if len(out) == 0 {
		t.Fatal("the collector registers no loadprobe_fleet_ family")
	}
	return out
}

// descName reads the name and variable labels of a prometheus.Desc from its
// String form, the only place client_golang shows them.
var descName = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// describer is a Registerer that keeps what its collectors describe.
type describer struct{ descs []*prometheus.Desc }

func (r *describer) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		r.descs = append(r.descs, d)
	}
	return nil
}

func (r *describer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *describer) Unregister(prometheus.Collector) bool { return false }
