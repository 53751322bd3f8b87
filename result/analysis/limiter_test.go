package analysis

import (
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// nginxLimited is a concurrency ramp of 2 s levels into nginx's limit_req
// at 200/s: every level passes 200/s and answers the rest with 429, the
// first second of each level a little more (the bucket's burst).
func nginxLimited(levels ...float64) *result.Result {
	r := &result.Result{Mode: plan.ModeConcurrency}
	for _, l := range levels {
		r.Steps = append(r.Steps, mk(l, []int64{206, 200}, []int64{int64(l) * 2000, int64(l) * 2000}, "429", ms(2)))
	}
	return r
}

func TestLimiterPassRateWithNoCapacity(t *testing.T) {
	t.Parallel()
	r := nginxLimited(4, 8)
	Analyze(r, plan.DefaultRules)
	if r.Capacity != nil {
		t.Errorf("capacity %+v, want none: every level failed past the error budget of 0", *r.Capacity)
	}
	if l := r.Limiter; l == nil || l.Code != "429" || !approx(l.Throughput, 203, 1e-9) {
		t.Fatalf("limiter %+v, want 203/s (the levels' median goodput) by 429", l)
	}
	checkDiagnosis(t, r.Diagnosis, []string{
		"a limiter passes about 203/s: 429 on 98% of attempts (a limiter declining on purpose) from 4 connections on; capacity is none because its declines put every level outside rules.error_ratio_budget (0)",
		"successes pinned near 203/s while 429s took the rest: a rate limit, not a capacity",
	}, nil)
}

// One 2 s level, as when abort.error_ratio ends the ramp after it: too
// few seconds for the cap shape, but a 429 is a limiter's own word, and no
// line says the failures are not a limit's.
func TestLimiterOneLevelIsEnough(t *testing.T) {
	t.Parallel()
	r := nginxLimited(4)
	Analyze(r, plan.DefaultRules)
	if l := r.Limiter; l == nil || l.Throughput != 203 {
		t.Errorf("limiter %+v, want 203/s: a 429 is a limiter's own word", l)
	}
	checkDiagnosis(t, r.Diagnosis, []string{"a limiter passes about 203/s"}, []string{"a rate held by a limit"})
}

func TestLimiterNotNamedWhenSuccessesMoveWithTheLevel(t *testing.T) {
	t.Parallel()
	r := &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
		mk(4, rep(5, 100), rep(5, 100), "429", ms(2)),
		mk(8, rep(5, 200), rep(5, 200), "429", ms(2)),
		mk(16, rep(5, 400), rep(5, 400), "429", ms(2)),
	}}
	Analyze(r, plan.DefaultRules)
	if r.Limiter != nil {
		t.Errorf("limiter %+v, want none: goodput doubles with the level", *r.Limiter)
	}
}

func TestLimiterNotNamedForOtherFailures(t *testing.T) {
	t.Parallel()
	r := &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
		mk(4, rep(5, 200), rep(5, 800), "503", ms(2)),
		mk(8, rep(5, 200), rep(5, 1800), "503", ms(2)),
	}}
	Analyze(r, plan.DefaultRules)
	if r.Limiter != nil {
		t.Errorf("limiter %+v, want none: 503 is shedding, not a limiter", *r.Limiter)
	}
	if strings.Contains(strings.Join(r.Diagnosis, "\n"), "limiter passes") {
		t.Errorf("diagnosis names a limiter:\n%s", strings.Join(r.Diagnosis, "\n"))
	}
}

func TestCapacityLevelHoldsUnderAHardCap(t *testing.T) {
	t.Parallel()
	// HAProxy's maxconn 8 in front of a 25 ms backend: 8 and 16 read
	// 304/s and 296.5/s in one run, the other way round in the next.
	for _, at8 := range []int64{304, 296} {
		at16 := 600 - at8
		r := &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
			clean(1, 40, ms(26)), clean(2, 80, ms(26)), clean(4, 160, ms(26)),
			clean(8, at8, ms(27)), clean(16, at16, ms(55)),
		}}
		Analyze(r, plan.DefaultRules)
		if c := r.Capacity; c == nil || c.Level != 8 || c.Throughput != 304 {
			t.Errorf("8 at %d/s, 16 at %d/s: capacity %+v, want 304/s at 8 connections", at8, at16, c)
		}
	}
}

func TestKneeNotReachedWhileGoodputRises(t *testing.T) {
	t.Parallel()
	// nginx static: 8 connections read 40k/s, 16 read 45.2k/s (13% more).
	r := &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
		clean(1, 9000, ms(1)), clean(2, 18000, ms(1)), clean(4, 31000, ms(1)),
		clean(8, 40000, ms(1)), clean(16, 45200, ms(1)),
	}}
	Analyze(r, plan.DefaultRules)
	if r.BreakingPoints.Knee != nil {
		t.Errorf("knee %+v, want none: goodput still rises at the last level", *r.BreakingPoints.Knee)
	}
	if r.ReachedUpTo != 16 {
		t.Errorf("reached_up_to %g, want 16, the highest level measured", r.ReachedUpTo)
	}
	checkDiagnosis(t, r.Diagnosis, []string{"the knee is not reached up to 16 connections"}, []string{"stopped improving"})

	// Within knee_fraction of the level below, the knee is below the top.
	r.Steps[4] = clean(16, 41000, ms(1))
	Analyze(r, plan.DefaultRules)
	checkPoint(t, "knee", r.BreakingPoints.Knee, pt(8, 40000))
}

func TestPhasesReachNoLevel(t *testing.T) {
	t.Parallel()
	r := &result.Result{Mode: plan.ModePhases, Steps: []result.Step{clean(10, 10, ms(1)), clean(20, 20, ms(1))}}
	Analyze(r, plan.DefaultRules)
	if r.ReachedUpTo != 0 {
		t.Errorf("reached_up_to %g for phases, want 0 (left out): a profile is not a ramp", r.ReachedUpTo)
	}
}

// The diagnosis names levels in the probe's own words: a WebSocket ramp's
// sessions, a gRPC ramp's streams and an open loop's calls per second.
func TestDiagnosisSpeaksTheProtocol(t *testing.T) {
	for _, tc := range []struct {
		protocol plan.Protocol
		mode     plan.Mode
		want     string
	}{
		{plan.ProtocolWebSocket, plan.ModeConcurrency, "throughput stopped improving at 8 sessions"},
		{plan.ProtocolGRPC, plan.ModeConcurrency, "throughput stopped improving at 8 streams"},
		{plan.ProtocolGRPC, plan.ModeRate, "throughput stopped improving at 8 calls/s"},
	} {
		r := result.Result{Mode: tc.mode, Protocol: tc.protocol, Ended: result.ResultCompleted}
		for _, lv := range []float64{1, 2, 4, 8, 16} {
			good := 100 * min(lv, 8)
			r.Steps = append(r.Steps, result.Step{Level: lv, Attempts: int64(good), Goodput: good, Throughput: good,
				Responses: result.Codes{result.HTTPStatus(200): int64(good)}, Latency: result.Latency{P99: 0.01}})
		}
		Analyze(&r, plan.DefaultRules)
		checkDiagnosis(t, r.Diagnosis, []string{tc.want}, []string{"connections", "req/s"})
	}
}
