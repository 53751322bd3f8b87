package fleet

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
)

func TestAlignedLengthCountsEveryStepAndAllowance(t *testing.T) {
	d := func(s string) model.Duration { v, _ := model.ParseDuration(s); return v }
	for _, tc := range []struct {
		name string
		load plan.Load
		want time.Duration
	}{
		{"three levels of 2s", plan.Load{Concurrency: []int{1, 2, 4}, StepDuration: d("2s"), SettleTimeout: d("30s")}, 9 * time.Second},
		// The allowance is at most settle_timeout.
		{"settle_timeout below half a step", plan.Load{Rate: []float64{10, 20}, StepDuration: d("10s"), SettleTimeout: d("1s")}, 22 * time.Second},
		// Phases keep their own lengths; the allowance is half a step_duration.
		{"phases", plan.Load{Phases: []plan.Phase{{Name: "a", Duration: d("3s"), Rate: 1}, {Name: "b", Duration: d("1s"), Rate: 2}},
			StepDuration: d("4s"), SettleTimeout: d("30s")}, 8 * time.Second},
		// A search takes max_steps steps at most, whatever levels it chooses.
		{"a search", plan.Load{Search: &plan.Search{MaxSteps: 5}, StepDuration: d("2s"), SettleTimeout: d("30s")}, 15 * time.Second},
	} {
		if got := AlignedLength(tc.load); got != tc.want {
			t.Errorf("%s: AlignedLength %s, want %s", tc.name, got, tc.want)
		}
		at := time.Unix(1000, 0)
		starts := StepStarts(at, tc.load)
		steps := len(tc.load.Steps())
		if s := tc.load.Search; s != nil {
			steps = s.MaxSteps
		}
		if len(starts) != steps+1 || !starts[0].Equal(at) || starts[len(starts)-1].Sub(at) != tc.want {
			t.Errorf("%s: StepStarts %v from %v, want the first at the boundary and the last %s after it", tc.name, starts, at, tc.want)
		}
	}
}

func TestBoundaryIsEpochAligned(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		grid time.Duration
		want time.Time
	}{
		{time.Unix(100, 0), 7 * time.Second, time.Unix(105, 0)},
		{time.Unix(105, 0), 7 * time.Second, time.Unix(105, 0)},
		{time.Unix(105, 1), 7 * time.Second, time.Unix(112, 0)},
		{time.Date(2026, 12, 1, 0, 59, 59, 0, time.UTC), time.Hour, time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)},
	} {
		if got := Boundary(tc.at, tc.grid); !got.Equal(tc.want) {
			t.Errorf("Boundary(%s, %s) = %s, want %s", tc.at, tc.grid, got, tc.want)
		}
	}
}
