package wire

import (
	"testing"
	"time"
)

// A deadline is set a slack later than the first request's, kept for the
// requests due within that slack, and moved for one due past it or well
// before it; none (zero) is always set.
func TestDeadlineKeptWithinSlack(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var d Deadline
	for _, tc := range []struct {
		due      time.Duration
		none     bool
		want     time.Duration
		wantMove bool
	}{
		{due: 0, want: DeadlineSlack, wantMove: true},
		{due: DeadlineSlack / 2, want: DeadlineSlack},
		{due: DeadlineSlack, want: DeadlineSlack},
		{due: DeadlineSlack + 1, want: 2*DeadlineSlack + 1, wantMove: true},
		{due: -DeadlineSlack, want: 0, wantMove: true},
		{none: true, wantMove: true},
		{none: true, wantMove: true},
		{due: 0, want: DeadlineSlack, wantMove: true},
	} {
		due, want := t0.Add(tc.due), t0.Add(tc.want)
		if tc.none {
			due, want = time.Time{}, time.Time{}
		}
		got, move := d.Move(due)
		if !got.Equal(want) || move != tc.wantMove {
			t.Fatalf("due %v (none %v): %v %v, want %v %v", tc.due, tc.none, got.Sub(t0), move, tc.want, tc.wantMove)
		}
	}
	d.Forget()
	if _, move := d.Move(t0); !move {
		t.Error("a forgotten deadline is kept")
	}
}
