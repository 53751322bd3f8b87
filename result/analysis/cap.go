package analysis

import (
	"fmt"
	"math"

	"github.com/loadprobe/loadprobe/result"
)

// Cap thresholds.
const (
	// A cap's successes per second stay within this fraction of their
	// median (or within one request, for small counts) in every failing
	// second but one in ten (at least one may stray) ...
	capTolerance = 0.10
	// ... while attempts per second stay at least this many times the
	// successes: a cap turns away a good part of the load, not a few.
	capExcess = 1.25
)

// capLine: in the failing steps, successes per second stay still (within
// capTolerance of their median) while attempts are well above them and
// move more than they do, and failures come in nearly every second.
//
// That last test is what tells a cap from a fixed failure probability p,
// which also gives steady successes beside steady failures at one level:
// under a fixed p, successes follow attempts, plus the binomial noise of p.
// A cap holds successes still while attempts move (across levels, or from
// second to second in a closed loop), and at a steady offered rate it holds
// them far stiller than any coin would.
func (a *analysis) capLine(tl []tick) string {
	steps := a.r.Steps
	var succ, att []float64
	var leading []bool // the second opens its step: where a full bucket bursts
	var failing int
	var failSteps []result.Step
	for _, t := range tl {
		if steps[t.step].ErrorRatio == 0 {
			continue
		}
		if len(failSteps) == 0 || failSteps[len(failSteps)-1].Level != steps[t.step].Level {
			failSteps = append(failSteps, steps[t.step])
		}
		s, f := float64(t.success), float64(t.failure)
		succ, att, leading = append(succ, s), append(att, s+f), append(leading, t.sec == 0)
		if t.failure > 0 {
			failing++
		}
	}
	if len(succ) < 3 {
		return ""
	}
	m := median(succ)
	if m <= 0 || float64(failing) < nearlyAll*float64(len(succ)) || median(att) < capExcess*m {
		return ""
	}
	// The steady seconds: all but a few outliers, such as the burst a
	// limiter admits at the start of a step after a quiet settle (a token
	// bucket starts full), which every level may show.
	var steadyS, steadyA, burstS, burstA []float64
	var sumS, sumA float64
	for i, v := range succ {
		switch {
		case math.Abs(v-m) <= max(capTolerance*m, 1):
			steadyS, steadyA = append(steadyS, v), append(steadyA, att[i])
			sumS, sumA = sumS+v, sumA+att[i]
		case leading[i] && v > m:
			burstS, burstA = append(burstS, v), append(burstA, att[i])
		}
	}
	outliers := len(succ) - len(steadyS) - len(burstS)
	if len(steadyS) < 3 || outliers > max(1, len(succ)/10) {
		return ""
	}
	// Telling a cap's stillness from a coin's noise at a steady rate takes
	// four seconds: with fewer, a coin is that still too often.
	coin := len(steadyS) >= 4 && tooSteadyForACoin(steadyS, sumS/sumA, sumA/float64(len(steadyA)))
	burst := burstThenPinned(burstS, burstA, sumS/sumA)
	if !stillerThanAttempts(steadyS, steadyA) && !coin && !burst {
		return "" // successes move with attempts: a failure probability, not a cap
	}
	top := topKind(failSteps...)
	verdict := "a working cap"
	if top.code.Class() == result.ClassLimited {
		verdict = "a rate limit, not a capacity"
	}
	every := "failures every second"
	if failing < len(succ) {
		every = fmt.Sprintf("failures in %d of %d seconds", failing, len(succ))
	}
	return fmt.Sprintf("successes pinned near %s/s while %s took the rest: %s (%s from %s on; %s: %s)",
		fmtNum(m), top.plural(), verdict, every, a.levelText(failSteps[0]), top.name(), top.meaning())
}

// burstThenPinned reports whether the leading seconds above the steady
// successes (burstS of burstA attempts) let through far more than the
// steady seconds' share p of their attempts: more than five binomial
// standard deviations above p·attempts in each. A fixed failure
// probability cannot give that, while a token bucket that starts full
// does: its burst, then its rate.
func burstThenPinned(burstS, burstA []float64, p float64) bool {
	if len(burstS) == 0 || !(p > 0 && p < 1) {
		return false
	}
	for i, s := range burstS {
		if s-p*burstA[i] <= 5*math.Sqrt(burstA[i]*p*(1-p)) {
			return false
		}
	}
	return true
}

// stillerThanAttempts reports whether successes per second hold still
// while attempts move: "successes are a constant" fits them at least four
// times better (in squared error) than "successes are a fixed share of
// attempts", and the share misses by far more than a coin's binomial noise
// could (ten times its variance per degree of freedom, beyond the 99.9th
// percentile). Under a fixed share neither can happen, as successes then
// move with attempts.
func stillerThanAttempts(succ, att []float64) bool {
	var sumS, sumA float64
	for i := range succ {
		sumS, sumA = sumS+succ[i], sumA+att[i]
	}
	n := float64(len(succ))
	mean, share := sumS/n, sumS/sumA
	var constant, proportional float64
	for i, s := range succ {
		constant += (s - mean) * (s - mean)
		proportional += (s - share*att[i]) * (s - share*att[i])
	}
	noise := sumA / n * share * (1 - share)
	return constant*4 < proportional && proportional > 10*(n-1)*noise
}

// tooSteadyForACoin reports whether successes per second vary far less than
// a fixed success probability p would make them at mean attempts a second:
// their variance is at least the binomial n·p·(1-p) under any fixed p, and
// here it is below a 64th of that (a standard deviation below an eighth),
// which a coin does in about one five-second sample of 2000 (one four-second
// sample of 400).
func tooSteadyForACoin(succ []float64, p, mean float64) bool {
	var m, v float64
	for _, x := range succ {
		m += x
	}
	m /= float64(len(succ))
	for _, x := range succ {
		v += (x - m) * (x - m)
	}
	v /= float64(len(succ) - 1)
	return v < mean*p*(1-p)/64
}
