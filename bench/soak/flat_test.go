package main

import (
	"math"
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	minutes := func(n int) []float64 {
		ts := make([]float64, n)
		for i := range ts {
			ts[i] = float64(i) / 6 // a sample every 10 s
		}
		return ts
	}
	series := func(n int, f func(i int) float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = f(i)
		}
		return xs
	}
	goroutineTol := tolerance{abs: 20, rel: 0.1}
	tests := []struct {
		name string
		xs   []float64
		sum  summary
		tol  tolerance
		flat bool
	}{
		{"constant", series(48, func(int) float64 { return 50 }), medianOf, goroutineTol, true},
		{"leaking 6 goroutines a minute", series(48, func(i int) float64 { return 50 + float64(i) }), medianOf, goroutineTol, false},
		{"noisy but flat: runs under way at every other scrape", series(48, func(i int) float64 { return 50 + float64(i%2)*30 }), medianOf, goroutineTol, true},
		{"noisy and leaking", series(48, func(i int) float64 { return 50 + float64(i%2)*30 + float64(i) }), medianOf, goroutineTol, false},
		{"falling after the warm-up", series(48, func(i int) float64 { return 90 - float64(i) }), medianOf, goroutineTol, true},
		{"series dipping while runs rebuild them", series(48, func(i int) float64 { return 4369 - float64(i%3)*48 }), peakOf, tolerance{}, true},
		{"one series more at the end", series(48, func(i int) float64 { return 4369 + float64(i/40) }), peakOf, tolerance{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := judge(minutes(len(tt.xs)), tt.xs, tt.sum, tt.tol)
			if err != nil {
				t.Fatal(err)
			}
			if v.flat != tt.flat {
				t.Errorf("flat = %v, want %v (first %v, last %v, allowed %v)", v.flat, tt.flat, v.first, v.last, v.allowed)
			}
		})
	}
}

func TestJudgeSlopePerMinute(t *testing.T) {
	// 3 per sample, a sample every 10 s: 18 per minute.
	ts := []float64{0, 1.0 / 6, 2.0 / 6, 3.0 / 6, 4.0 / 6, 5.0 / 6}
	xs := []float64{0, 3, 6, 9, 12, 15}
	v, err := judge(ts, xs, medianOf, tolerance{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(v.slopePerMin-18) > 1e-9 {
		t.Errorf("slope = %v/min, want 18", v.slopePerMin)
	}
}

func TestJudgeNeedsThreeSamples(t *testing.T) {
	_, err := judge([]float64{0, 1}, []float64{5, 5}, medianOf, tolerance{})
	if err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("err = %v, want one that asks for at least 3 samples", err)
	}
}
