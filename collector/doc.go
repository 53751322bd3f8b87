// Package collector exposes what loadprobe measures as Prometheus metrics. It
// owns the metric families of docs/metrics.md (names, labels, help, buckets): it
// reads results and live counts, and never starts or judges a run.
//
// Two kinds of families live here. The live families (requests, responses,
// latency histograms, in-flight, offered load, runs) are client_golang vectors
// fed on the hot path through [Collector.Live]; their children are resolved
// once per probe so that recording an attempt costs a few atomic operations.
// The per-step and per-run families are built at scrape time, as const
// metrics, from a [Source] that hands out the latest result of every probe.
package collector
