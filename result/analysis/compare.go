package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// Judge compares cand with base, two runs of one probe: the candidate's
// capacity over the baseline's, with an interval at c.Confidence from the
// per-second goodput of each side's capacity level, and the candidate's p99
// at the baseline's capacity level over the baseline's, with an interval
// from the p99 of each of its seconds (docs/compare.md, "The verdict").
// The verdict is fail when either interval lies beyond its bound, pass
// when both lie within them (or the capacity's does, and the seconds keep
// no p99), inconclusive otherwise.
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
	capacity := judgeCapacity(v, perSecond(base, bc.Level), perSecond(cand, cc.Level), c)
	latency := judgeLatency(v, stepAt(base, bc.Level), stepAt(cand, bc.Level), c)
	v.Verdict, v.Reason = combine(capacity, latency)
	return v
}

// judgement is one figure's verdict and why; an empty verdict: not judged.
type judgement struct{ verdict, reason string }

// judgeCapacity sets v's interval from the per-second goodput a of the
// baseline's capacity level and b of the candidate's: Welch's t interval
// on the log of the ratio of their means, its standard error by the delta
// method, se² = s²ₐ/(nₐ·mₐ²) + s²ᵦ/(nᵦ·mᵦ²), centered on the log of the
// capacities' ratio.
func judgeCapacity(v *result.Compare, a, b []float64, c plan.Compare) judgement {
	if len(a) < 2 || len(b) < 2 {
		return judgement{result.VerdictInconclusive, "fewer than 2 whole seconds at a capacity level: no interval"}
	}
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	if ma <= 0 || mb <= 0 {
		return judgement{result.VerdictInconclusive, "no success at a capacity level's seconds: no interval"}
	}
	half := halfWidth(va/(float64(len(a))*ma*ma), vb/(float64(len(b))*mb*mb), len(a), len(b), c.Confidence)
	v.Interval = [2]float64{v.CapacityRatio * math.Exp(-half), v.CapacityRatio * math.Exp(half)}
	floor := 1 - c.MaxLoss
	switch {
	case v.Interval[1] < floor:
		return judgement{result.VerdictFail, fmt.Sprintf("the candidate's capacity is below %s of the baseline's at %s confidence", fmtPct(floor), fmtPct(c.Confidence))}
	case v.Interval[0] >= floor:
		return judgement{result.VerdictPass, ""}
	}
	return judgement{result.VerdictInconclusive, fmt.Sprintf("the capacity ratio's interval [%s, %s] holds %s: more seconds at each capacity level would tell",
		fmtNum(v.Interval[0]), fmtNum(v.Interval[1]), fmtNum(floor))}
}

// judgeLatency sets v's latency ratio, the candidate's p99 over the
// baseline's at the baseline's capacity level (base and cand, its steps
// there; nil when not run), and its interval by sectioning: centered on
// the log of the steps' p99 ratio, its standard error from the spread of
// the log p99 of each side's seconds, se² = s²ₐ/nₐ + s²ᵦ/nᵦ, with Welch's
// degrees of freedom. A second is a section: latencies a second apart are
// far less alike than those of one queue, so the seconds' spread holds
// what a sample of requests would hide.
func judgeLatency(v *result.Compare, base, cand *result.Step, c plan.Compare) judgement {
	if base == nil || cand == nil || base.Succeeded() == 0 || cand.Succeeded() == 0 || base.Latency.P99 <= 0 {
		return judgement{}
	}
	ratio := cand.Latency.P99 / base.Latency.P99
	v.LatencyRatio = &ratio
	a, b := secondsP99(base), secondsP99(cand)
	if len(a) < 2 || len(b) < 2 {
		return judgement{} // results measured apart keep no second's p99
	}
	_, va := meanVar(a)
	_, vb := meanVar(b)
	half := halfWidth(va/float64(len(a)), vb/float64(len(b)), len(a), len(b), c.Confidence)
	v.LatencyInterval = &[2]float64{ratio * math.Exp(-half), ratio * math.Exp(half)}
	ceiling := 1 + c.MaxLatencyGain
	switch {
	case v.LatencyInterval[0] > ceiling:
		return judgement{result.VerdictFail, fmt.Sprintf("the candidate's p99 is above %s of the baseline's at %s confidence", fmtPct(ceiling), fmtPct(c.Confidence))}
	case v.LatencyInterval[1] <= ceiling:
		return judgement{result.VerdictPass, ""}
	}
	return judgement{result.VerdictInconclusive, fmt.Sprintf("the p99 ratio's interval [%s, %s] holds %s: more seconds at the baseline's capacity level would tell",
		fmtNum(v.LatencyInterval[0]), fmtNum(v.LatencyInterval[1]), fmtNum(ceiling))}
}

// halfWidth is the half-width, at confidence, of a t interval on a
// difference of two means whose squared standard errors are ea and eb,
// of na and nb values, with Welch's degrees of freedom; 0 without spread.
func halfWidth(ea, eb float64, na, nb int, confidence float64) float64 {
	se := math.Sqrt(ea + eb)
	if se == 0 {
		return 0
	}
	df := (ea + eb) * (ea + eb) / (ea*ea/float64(na-1) + eb*eb/float64(nb-1))
	return studentQuantile(1-(1-confidence)/2, df) * se
}

// combine is the verdict of the capacity's and the latency's judgements:
// fail when either fails, pass when the capacity passes and the latency
// passes or was not judged, inconclusive otherwise; with the reasons of
// the judgements that made it.
func combine(capacity, latency judgement) (string, string) {
	verdict := result.VerdictInconclusive
	switch {
	case capacity.verdict == result.VerdictFail || latency.verdict == result.VerdictFail:
		verdict = result.VerdictFail
	case capacity.verdict == result.VerdictPass && latency.verdict != result.VerdictInconclusive:
		return result.VerdictPass, ""
	}
	var reasons []string
	for _, j := range []judgement{capacity, latency} {
		if j.verdict == verdict && j.reason != "" {
			reasons = append(reasons, j.reason)
		}
	}
	return verdict, strings.Join(reasons, "; ")
}

// perSecond is the successes of each whole second of r's step at level.
func perSecond(r result.Result, level float64) []float64 {
	s := stepAt(r, level)
	if s == nil {
		return nil
	}
	out := make([]float64, len(s.PerSecond))
	for i, sec := range s.PerSecond {
		out[i] = float64(sec.Success)
	}
	return out
}

// stepAt is r's whole step at level; nil when r did not run it.
func stepAt(r result.Result, level float64) *result.Step {
	for _, s := range ByLevel(r.Mode, r.Whole()) {
		if s.Level == level {
			return &s
		}
	}
	return nil
}

// secondsP99 is the log of the p99 of each of s's seconds that kept one.
func secondsP99(s *result.Step) []float64 {
	var out []float64
	for _, sec := range s.PerSecond {
		if sec.P99 > 0 {
			out = append(out, math.Log(sec.P99))
		}
	}
	return out
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
	if l := v.LatencyInterval; l != nil {
		line += fmt.Sprintf(", its p99 %s of the baseline's [%s, %s]", fmtNum(*v.LatencyRatio), fmtNum(l[0]), fmtNum(l[1]))
	}
	if v.Reason != "" {
		line += ": " + v.Reason
	}
	r.Diagnosis = append(r.Diagnosis, line)
}
