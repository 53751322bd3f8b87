package analysis

import (
	"math"
	"testing"
)

// Student's t quantiles as tables give them.
func TestStudentQuantile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706}, {0.975, 4, 2.776}, {0.975, 10, 2.228}, {0.975, 30, 2.042},
		{0.995, 8, 3.355}, {0.95, 1000, 1.646}, {0.025, 4, -2.776}, {0.5, 7, 0},
	} {
		if got := studentQuantile(tc.p, tc.df); math.Abs(got-tc.want) > 0.001 {
			t.Errorf("t(%g; %g) = %.4f, want %.3f", tc.p, tc.df, got, tc.want)
		}
	}
}
