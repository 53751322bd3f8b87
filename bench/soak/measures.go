package main

import (
	"fmt"
	"slices"
)

// measure is one column of the soak: how to read it from a sample, show
// it, sum up a third of the samples, and how much it may grow.
type measure struct {
	name    string
	value   func(sample) float64
	unit    float64 // 1, or 1<<20 for MiB
	summary summary
	tol     tolerance
}

// summary sums up a third of a measure's samples in one number.
type summary struct {
	name string
	of   func([]float64) float64
}

var (
	medianOf = summary{"median", median}
	peakOf   = summary{"peak", func(xs []float64) float64 { return slices.Max(xs) }}
)

// The measures. Goroutines and fds follow the runs under way at the scrape
// (each connection is a goroutine or two and an fd), RSS and the heap
// follow the garbage collector's cycle: their medians, with a tolerance
// that a leak of one per run outgrows within minutes. The heap is RSS
// without what the runtime holds for later: a slow climb of RSS that the
// heap does not share is not the daemon's data growing. Series only dip below their
// level while a run rebuilds its step series: their peak, exactly.
var measures = []measure{
	{"goroutines", func(s sample) float64 { return s.goroutines }, 1, medianOf, tolerance{abs: 20, rel: 0.1}},
	{"rss", func(s sample) float64 { return s.rss }, 1 << 20, medianOf, tolerance{abs: 8 << 20, rel: 0.1}},
	{"heap in use", func(s sample) float64 { return s.heap }, 1 << 20, medianOf, tolerance{abs: 4 << 20, rel: 0.1}},
	{"open fds", func(s sample) float64 { return s.fds }, 1, medianOf, tolerance{abs: 8, rel: 0.1}},
	{"series", func(s sample) float64 { return s.series }, 1, peakOf, tolerance{}},
}

func (m measure) format(x float64) string {
	if m.unit == 1 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f MiB", x/m.unit)
}

// formatSlope is a slope per minute, with its sign and one more decimal.
func (m measure) formatSlope(x float64) string {
	if m.unit == 1 {
		return fmt.Sprintf("%+.1f/min", x)
	}
	return fmt.Sprintf("%+.2f MiB/min", x/m.unit)
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
