package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is one scrape of the daemon's /metrics.
type sample struct {
	at         time.Duration // since the daemon was ready
	goroutines float64
	rss        float64 // bytes
	heap       float64 // bytes in in-use heap spans
	fds        float64
	series     float64 // series in the exposition
	runs       float64 // runs ended so far, all probes and results
}

// scrape reads url (the daemon's /metrics) into a sample.
func scrape(ctx context.Context, client *http.Client, url string) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return sample{}, err
	}
	// The text format: what the parser below reads, whatever the handler
	// would otherwise negotiate.
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := client.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("%s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w", url, err)
	}
	s := sample{
		goroutines: gauge(families["go_goroutines"]),
		rss:        gauge(families["process_resident_memory_bytes"]),
		heap:       gauge(families["go_memstats_heap_inuse_bytes"]),
		fds:        gauge(families["process_open_fds"]),
		runs:       counterSum(families["loadprobe_runs_total"]),
	}
	for _, f := range families {
		s.series += float64(seriesOf(f))
	}
	return s, nil
}

// gauge is the value of a family's one gauge, 0 when absent.
func gauge(f *dto.MetricFamily) float64 {
	if f == nil || len(f.GetMetric()) == 0 {
		return 0
	}
	return f.GetMetric()[0].GetGauge().GetValue()
}

// counterSum is the sum of a counter family's series.
func counterSum(f *dto.MetricFamily) float64 {
	var sum float64
	for _, m := range f.GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// seriesOf counts a family's series as Prometheus would store them from
// the text format: a histogram's buckets plus _sum and _count, a summary's
// quantiles plus _sum and _count.
func seriesOf(f *dto.MetricFamily) int {
	n := 0
	for _, m := range f.GetMetric() {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			n += len(m.GetHistogram().GetBucket()) + 2
		case dto.MetricType_SUMMARY:
			n += len(m.GetSummary().GetQuantile()) + 2
		default:
			n++
		}
	}
	return n
}
