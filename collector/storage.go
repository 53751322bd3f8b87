package collector

import "github.com/prometheus/client_golang/prometheus"

// RegisterStorage registers loadprobe_storage_save_failures_total on reg,
// read from failures at each scrape: a results file that cannot be
// written is otherwise only a log line, and the next restart serves
// older results than the runs (docs/metrics.md, "Process").
func RegisterStorage(reg prometheus.Registerer, failures func() uint64) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "storage_save_failures_total",
		Help:      "Saves of the latest results to --storage.path that failed; 0 without --storage.path.",
	}, func() float64 { return float64(failures()) }))
}
