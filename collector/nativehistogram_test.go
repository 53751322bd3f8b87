package collector

import (
	"testing"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// A step's native buckets are served as a native histogram of its
// successes, beside the summary: its schema, count, sum and buckets as
// the step holds them. A step without them serves none.
func TestStepLatencyNativeHistogram(t *testing.T) {
	reg, src, _ := newTest(t)
	r := completedRun()
	// 500 in the bucket (2^(-857/128), 2^(-856/128)] (about 9.7 ms), 10
	// in the one above.
	r.Steps[0].LatencyBuckets = &result.NativeBuckets{Schema: 7, Buckets: map[int]int64{-856: 500, -855: 10}}
	src.set(state.Probe{Probe: probeConfig("work", 0), Last: r})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var levels []string
	for _, mf := range mfs {
		if mf.GetName() != StepLatencyHistogramName {
			continue
		}
		for _, m := range mf.GetMetric() {
			levels = append(levels, labelOf(m.GetLabel(), "level"))
			h := m.GetHistogram()
			if h.GetSchema() != 7 || h.GetSampleCount() != 510 || h.GetSampleSum() != r.Steps[0].Latency.Mean*510 {
				t.Errorf("schema %d, count %d, sum %g; want 7, 510 and their mean's sum", h.GetSchema(), h.GetSampleCount(), h.GetSampleSum())
			}
			spans, deltas := h.GetPositiveSpan(), h.GetPositiveDelta()
			if len(spans) != 1 || spans[0].GetOffset() != -856 || spans[0].GetLength() != 2 || len(deltas) != 2 || deltas[0] != 500 || deltas[1] != -490 {
				t.Errorf("spans %v, deltas %v; want buckets -856 and -855 holding 500 and 10", spans, deltas)
			}
		}
	}
	if len(levels) != 1 || levels[0] != "4" {
		t.Errorf("native histograms at levels %v, want the one step with buckets (4)", levels)
	}
}
