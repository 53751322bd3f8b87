package prober

import (
	"math"
	"time"
)

// The open loop's schedule: request n of a stage is due when the integral
// of the offered rate from the stage start reaches n.

// offset is when request n of a stage is due, from the stage start.
// Scheduling every request from the stage start, never from the previous
// send, keeps the pacing from drifting.
func (st stage) offset(n int) time.Duration {
	r0, r1, T := st.level, st.rampTo, st.duration.Seconds()
	var t float64
	if r1 == r0 {
		t = float64(n) / r0
	} else {
		// N(t) = r0·t + (r1-r0)·t²/(2T); solve N(t) = n for t ≥ 0. Past
		// the stage's total a falling rate has no solution: the clamp
		// keeps that from turning into NaN (the senders stop before).
		a := (r1 - r0) / (2 * T)
		t = (-r0 + math.Sqrt(max(0, r0*r0+4*a*float64(n)))) / (2 * a)
	}
	return time.Duration(t * float64(time.Second))
}

// count is how many requests are due in the first d of the stage: the
// integral of its rate up to d.
func (st stage) count(d time.Duration) float64 {
	t, T := d.Seconds(), st.duration.Seconds()
	return st.level*t + (st.rampTo-st.level)*t*t/(2*T)
}

// total is how many requests the stage sends: the integral of its rate.
func (st stage) total() float64 { return (st.level + st.rampTo) / 2 * st.duration.Seconds() }

// offered is the rate the stage asks for at elapsed time d.
func (st stage) offered(d time.Duration) float64 {
	return st.level + (st.rampTo-st.level)*d.Seconds()/st.duration.Seconds()
}

// requests is how many requests the stage schedules: those due before its
// end, numbered 0 to requests-1.
func (st stage) requests() int64 {
	if st.total() <= 0 {
		return 0
	}
	return st.index(st.duration)
}

// index is the first request due at or after d from the stage start, and
// at most the stage's total rounded up (past it a falling rate's offset
// stays at the stage's end). It goes by offset itself: count is its inverse
// only up to rounding, and a request must fall on the same side of a
// boundary whichever of the two asks. The stage must schedule some request
// (total > 0).
func (st stage) index(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	most := int64(math.Ceil(st.total()))
	n := min(int64(math.Ceil(st.count(min(d, st.duration)))), most)
	for n > 0 && st.offset(int(n-1)) >= d {
		n--
	}
	for n < most && st.offset(int(n)) < d {
		n++
	}
	return n
}
