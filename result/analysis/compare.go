package analysis

import (
	"fmt"
	"math"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Judge compares cand with base, two runs of one probe: the candidate's
// capacity over the baseline's, with an interval at c.Confidence from the
// per-second goodput of each side's capacity level, and the candidate's p99
// at the baseline's capacity level over the baseline's (docs/compare.md).
//
// The interval is Welch's t interval on the log of the ratio of the two
// levels' mean per-second goodput, its standard error by the delta method:
// se² = s²ᵦ/(nᵦ·mᵦ²) + s²ₐ/(nₐ·mₐ²), centered on the log of the capacities'
// ratio. The verdict is fail when the interval lies below 1 − c.MaxLoss,
// pass when it lies at or above it, inconclusive otherwise.
func Judge(base, cand result.Result, c plan.Compare) *result.Compare {
	v := &result.Compare{Verdict: result.VerdictInconclusive}
	bc, cc := base.Capacity, cand.Capacity
	switch {
	case bc == nil || bc.Throughput <= 0:
		v.Reason = "the baseline has no capacity: no level was within the budgets"
		return v
	case cc == nil:
		v.Verdict, v.Reason = result.VerdictFail, "the candidate has no capacity: no level was within the budgets"
		return v
	}
	v.CapacityRatio = cc.Throughput / bc.Throughput
	v.Interval = [2]float64{v.CapacityRatio, v.CapacityRatio}
	if p99 := latencyRatio(base, cand, bc.Level); p99 > 0 {
		v.LatencyRatio = &p99
	}
	a, b := perSecond(base, bc.Level), perSecond(cand, cc.Level)
	if len(a) < 2 || len(b) < 2 {
		v.Reason = "fewer than 2 whole seconds at a capacity level: no interval"
		return v
	}
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	if ma <= 0 || mb <= 0 {
		v.Reason = "no success at a capacity level's seconds: no interval"
		return v
	}
	ea, eb := va/(float64(len(a))*ma*ma), vb/(float64(len(b))*mb*mb)
	if se := math.Sqrt(ea + eb); se > 0 {
		df := (ea + eb) * (ea + eb) / (ea*ea/float64(len(a)-1) + eb*eb/float64(len(b)-1))
		half := studentQuantile(1-(1-c.Confidence)/2, df) * se
		v.Interval = [2]float64{v.CapacityRatio * math.Exp(-half), v.CapacityRatio * math.Exp(half)}
	}
	floor := 1 - c.MaxLoss
	switch {
	case v.Interval[1] < floor:
		v.Verdict = result.VerdictFail
		v.Reason = fmt.Sprintf("the candidate's capacity is below %s of the baseline's at %s confidence", fmtPct(floor), fmtPct(c.Confidence))
	case v.Interval[0] >= floor:
		v.Verdict = result.VerdictPass
	default:
		v.Reason = fmt.Sprintf("the interval [%s, %s] holds %s: more seconds at each capacity level would tell", fmtNum(v.Interval[0]), fmtNum(v.Interval[1]), fmtNum(floor))
	}
	return v
}

// perSecond is the successes of each whole second of r's step at level.
func perSecond(r result.Result, level float64) []float64 {
	for _, s := range ByLevel(r.Mode, r.Whole()) {
		if s.Level != level {
			continue
		}
		out := make([]float64, len(s.PerSecond))
		for i, sec := range s.PerSecond {
			out[i] = float64(sec.Success)
		}
		return out
	}
	return nil
}

// latencyRatio is cand's p99 at level over base's; 0 when either has no
// success there.
func latencyRatio(base, cand result.Result, level float64) float64 {
	p99 := func(r result.Result) float64 {
		for _, s := range ByLevel(r.Mode, r.Whole()) {
			if s.Level == level && s.Succeeded() > 0 {
				return s.Latency.P99
			}
		}
		return 0
	}
	if b, c := p99(base), p99(cand); b > 0 && c > 0 {
		return c / b
	}
	return 0
}

// meanVar is the mean and the sample variance of xs (len(xs) >= 2).
func meanVar(xs []float64) (float64, float64) {
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, ss / float64(len(xs)-1)
}

// Compared judges cand, the run of r's candidate at host measured beside
// it, against r, and says the verdict in r's diagnosis.
func Compared(r *result.Result, cand result.Result, host string, c plan.Compare) {
	v := Judge(*r, cand, c)
	v.Candidate = &cand
	r.Compare = v
	line := fmt.Sprintf("compared with the candidate %s: %s", host, v.Verdict)
	if r.Capacity != nil && cand.Capacity != nil {
		line += fmt.Sprintf(", its capacity %s of the baseline's [%s, %s] (%s/s against %s/s)",
			fmtNum(v.CapacityRatio), fmtNum(v.Interval[0]), fmtNum(v.Interval[1]), fmtNum(cand.Capacity.Throughput), fmtNum(r.Capacity.Throughput))
	}
	if v.Reason != "" {
		line += ": " + v.Reason
	}
	r.Diagnosis = append(r.Diagnosis, line)
}
