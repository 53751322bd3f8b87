package telemetry

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/internal/testkit"
	"github.com/loadprobe/loadprobe/plan"
)

func reader(t *testing.T, url string, traffic string, resources ...plan.Resource) *Reader {
	t.Helper()
	r, err := NewReader(&plan.Telemetry{
		Prometheus: plan.Prometheus{URL: url, HTTPClientConfig: config.DefaultRequest.HTTPClientConfig},
		Traffic:    traffic, PeakWindow: model.Duration(time.Hour), Saturation: resources,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// Each resource reads, over each step's measured window, the highest value
// of its most saturated series: a pool at its limit through a step reads
// it though the last scrape caught a worker between jobs. One query per
// resource reads every step.
func TestSaturationOverEachStepsWindow(t *testing.T) {
	base := time.Now().Add(-time.Minute).Truncate(time.Second)
	ends := []time.Time{base.Add(5*time.Second + 400*time.Microsecond), base.Add(10*time.Second + 300*time.Millisecond), base.Add(15 * time.Second)}
	// The last window, shorter than a second, reads its latest point.
	windows := []Window{{base.Add(400 * time.Microsecond), ends[0]}, {ends[0], ends[1]}, {ends[1], ends[2]}, {ends[2].Add(-500 * time.Millisecond), ends[2]}}
	// Two instances: the busier one's workers are the resource's value.
	busy := func(scale float64) testkit.Series {
		return func(at time.Time) (float64, bool) {
			return scale * math.Min(1, float64(at.Sub(base)/time.Second)/15), true
		}
	}
	cpuGap := func(at time.Time) (float64, bool) { return 0.5, !at.After(ends[1]) || at.After(ends[2]) }
	// At its limit but at each step's last point.
	dips := func(at time.Time) (float64, bool) {
		if at.Sub(base)%(5*time.Second) == 0 {
			return 0.9, true
		}
		return 1, true
	}
	var asked atomic.Int64
	prom := testkit.FakePrometheus(t, map[string][]testkit.Series{
		"workers": {busy(0.5), busy(1)},
		"cpu":     {cpuGap},
		"nan":     {func(time.Time) (float64, bool) { return math.NaN(), true }},
		"dips":    {dips},
	}, &asked)
	r := reader(t, prom.URL, "", plan.Resource{Name: "workers", Query: "workers"}, plan.Resource{Name: "cpu", Query: "cpu"},
		plan.Resource{Name: "nan", Query: "nan"}, plan.Resource{Name: "pool", Query: "dips"})
	got, err := r.Saturation(context.Background(), windows)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]float64{{"workers": 5.0 / 15, "cpu": 0.5, "pool": 1}, {"workers": 10.0 / 15, "cpu": 0.5, "pool": 1}, {"workers": 1, "pool": 1}, {"workers": 1, "pool": 0.9}}
	for i := range want {
		for name, w := range want[i] {
			if g, ok := got[i][name]; !ok || math.Abs(g-w) > 1e-9 {
				t.Errorf("step %d: %s = %v (read: %v), want %v", i, name, g, ok, w)
			}
		}
		if len(got[i]) != len(want[i]) {
			t.Errorf("step %d read %v, want only %v: a resource without a value at a step's end is left out", i, got[i], want[i])
		}
	}
	if n := asked.Load(); n != 4 {
		t.Errorf("%d queries for 4 resources over 4 steps, want 4", n)
	}
	bad := reader(t, prom.URL, "", plan.Resource{Name: "db", Query: "unknown"})
	if _, err := bad.Saturation(context.Background(), windows); err == nil || !strings.Contains(err.Error(), "resource db:") {
		t.Errorf("a failed query: error %v, want one naming the resource", err)
	}
}

// The live peak is the highest of the traffic's points over the window
// (its series summed), the live value its point now.
func TestTrafficPeakAndNow(t *testing.T) {
	now := time.Now()
	// 100/s, with an hour-old burst to 250/s, split over two instances.
	half := func(at time.Time) (float64, bool) {
		if d := now.Sub(at); d > 40*time.Minute && d < 45*time.Minute {
			return 125, true
		}
		return 50, true
	}
	prom := testkit.FakePrometheus(t, map[string][]testkit.Series{
		"traffic": {half, half},
		"old":     {func(at time.Time) (float64, bool) { return 30, now.Sub(at) > 10*time.Minute }},
		"none":    {},
	}, nil)
	live, err := reader(t, prom.URL, "traffic").Traffic(context.Background(), now)
	if err != nil || live.Peak != 250 || live.Now != 100 {
		t.Errorf("Traffic = %+v, %v; want a peak of 250 and 100 now", live, err)
	}
	if live, err := reader(t, prom.URL, "old").Traffic(context.Background(), now); err != nil || live.Peak != 30 || live.Now != 0 {
		t.Errorf("traffic that stopped 10 minutes ago: %+v, %v; want a peak of 30 and 0 now", live, err)
	}
	if _, err := reader(t, prom.URL, "none").Traffic(context.Background(), now); err == nil || err.Error() != "no sample in the peak window" {
		t.Errorf("no traffic at all: error %v, want no sample in the peak window", err)
	}
}
