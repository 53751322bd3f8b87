package analysis

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

func rep(n int, v int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// mk builds a step from its per-second counts, as summarize would: failures
// of kind (a status code or a reason), the given p99 (the other quantiles
// scaled from it) and a load held of 0.95 unless the test says otherwise;
// Little's law over the responses reads the held load's share answered.
func mk(level float64, succ, fail []int64, kind string, p99 time.Duration) result.Step {
	s := result.Step{
		Level:           level,
		DurationSeconds: float64(len(succ)),
		Responses:       result.Codes{},
		HTTPErrors:      result.Codes{},
		Errors:          map[string]int64{"timeout": 0, "refused": 0, "reset": 0, "tls": 0, "dns": 0, "other": 0},
		PerSecond:       []result.Second{},
		LoadHeldRatio:   0.95,
	}
	var ns, nf int64
	for i := range succ {
		s.PerSecond = append(s.PerSecond, result.Second{Second: i, Success: succ[i], Failure: fail[i]})
		ns += succ[i]
		nf += fail[i]
	}
	s.Attempts = ns + nf
	responses := ns
	if ns > 0 {
		s.Responses[result.HTTPStatus(200)] = ns
	}
	if nf > 0 {
		if n, err := strconv.Atoi(kind); err == nil {
			code := result.HTTPStatus(n)
			s.Responses[code] = nf
			s.HTTPErrors[code] = nf
			responses += nf
		} else {
			s.Errors[kind] = nf
		}
	}
	if s.Attempts > 0 {
		s.ErrorRatio = float64(nf) / float64(s.Attempts)
	}
	s.Goodput = float64(ns) / s.DurationSeconds
	s.Throughput = float64(responses) / s.DurationSeconds
	if responses > 0 {
		q := p99.Seconds()
		s.Latency = result.Latency{Mean: q / 2, P50: q / 2, P90: q * 0.8, P95: q * 0.9, P99: q, P999: q * 1.2, Max: q * 1.5}
	}
	if s.Attempts > 0 {
		s.InFlight = s.LoadHeldRatio * level * float64(responses) / float64(s.Attempts)
	}
	return s
}

func clean(level float64, goodput int64, p99 time.Duration) result.Step {
	return mk(level, rep(5, goodput), rep(5, 0), "", p99)
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// reference reproduces the reference ramp of docs/design.md: knee at 4, latency budget at
// 128, first failure at 512, where most attempts timed out and 47 were in
// flight by Little's law over the responses, while the generator kept all
// 512 connections waiting on them.
func reference() *result.Result {
	levels := []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	goodput := []int64{100, 200, 398, 405, 404, 403, 400, 395, 390}
	p99 := []float64{10, 10, 10.2, 14, 20, 41, 120, 320, 640}
	r := &result.Result{Mode: plan.ModeConcurrency}
	for i, g := range goodput {
		r.Steps = append(r.Steps, clean(levels[i], g, ms(p99[i])))
	}
	last := mk(512, rep(5, 52), rep(5, 400), "timeout", ms(900))
	last.InFlight, last.LoadHeldRatio = 47, 0.98
	r.Steps = append(r.Steps, last)
	return r
}

func pt(level, throughput float64) *result.Point {
	return &result.Point{Level: level, Throughput: throughput}
}

func TestAnalysis(t *testing.T) {
	budget1pct := plan.DefaultRules
	budget1pct.ErrorRatioBudget = 0.01

	heldRef := reference()
	heldRef.Steps = heldRef.Steps[:9] // the ramp up to 256: nothing failed

	lowHeld := reference()
	lowHeld.Steps = lowHeld.Steps[:5]
	lowHeld.Steps[1].LoadHeldRatio, lowHeld.Steps[1].InFlight = 0.5, 1

	// The Universal Scalability Law's shape: goodput peaks, then falls
	// while every level stays within both budgets.
	usl := &result.Result{Mode: plan.ModeConcurrency}
	for i, l := range []float64{1, 6, 12, 24, 48} {
		usl.Steps = append(usl.Steps, clean(l, []int64{40, 200, 310, 365, 303}[i], ms(20+float64(i)*20)))
	}

	tests := []struct {
		name        string
		r           *result.Result
		rules       plan.Rules
		peak        float64
		bp          result.BreakingPoints
		capacity    *result.Point
		valid       bool
		diagnosis   []string // substrings, each of some line
		notInAnyOne []string
	}{
		{
			name: "reference ramp", r: reference(), rules: plan.DefaultRules,
			peak: 405,
			bp:   result.BreakingPoints{Knee: pt(4, 398), LatencyBudget: pt(128, 395), FirstFailure: pt(512, 52)},
			// The best goodput below 128, which broke the latency budget.
			capacity: pt(4, 405),
			// 512, the first failure, is not judged; and there the generator
			// held its load while the target let it time out.
			valid: true,
			diagnosis: []string{
				"throughput stopped improving at 4 connections (the knee: goodput 398/s, within 95% of the 405/s peak); p99 grows from 10.2ms to 900ms after it (at 512 connections)",
				"p99 latency exceeded the 200ms budget at 128 connections (the latency budget: p99 320ms, goodput 395/s)",
				"first failure at 512 connections: timeout on 88% of attempts (the client's own deadline passed first)",
				"capacity 405/s at 4 connections: the highest goodput within the 200ms p99 budget and without a failed attempt (read at 8 connections; 4 connections, 398/s, is the lowest level within 3% of it); goodput falls past it, to 52/s at 512 connections (87% less)",
				"at 512 connections the generator held its load (load held 98%) but only 47 requests were in flight by Little's law over the responses: 88% of attempts got no response (timeout): the target collapsed, not the generator",
			},
			notInAnyOne: []string{"did not hold", "generator-limited"},
		},
		{
			name: "capacity is the best goodput within budgets, not the highest level's",
			r:    usl, rules: plan.DefaultRules,
			peak: 365, bp: result.BreakingPoints{Knee: pt(24, 365)},
			capacity: pt(24, 365), valid: true,
			diagnosis: []string{
				"capacity 365/s at 24 connections: the highest goodput within the 200ms p99 budget and without a failed attempt; goodput falls past it, to 303/s at 48 connections (17% less)",
			},
		},
		{
			name: "never-fired rules stay nil", r: heldRef, rules: plan.DefaultRules,
			peak:     405,
			bp:       result.BreakingPoints{Knee: pt(4, 398), LatencyBudget: pt(128, 395)},
			capacity: pt(4, 405),
			valid:    true,
			diagnosis: []string{
				"no attempt failed at any level",
			},
			notInAnyOne: []string{"did not hold", "cliff", "working cap"},
		},
		{
			name: "all refused",
			r: &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
				heldAt(mk(1, rep(5, 0), rep(5, 2000), "refused", 0), 0.9),
				heldAt(mk(2, rep(5, 0), rep(5, 2100), "refused", 0), 0.9),
			}},
			rules: plan.DefaultRules,
			bp:    result.BreakingPoints{FirstFailure: pt(1, 0)},
			// Nothing below the first failure to judge: the finding is the
			// target's, and a sound one.
			valid: true,
			diagnosis: []string{
				"no successful response at any level: no throughput curve, no knee",
				"no response at any level: the 200ms p99 budget could not be judged",
				"first failure at 1 connection: refused on 100% of attempts (the server never answered: connection refused)",
				"no capacity: no level was within the 200ms p99 budget and without a failed attempt",
				"at 1 connection the generator held its load (load held 90%) but only 0 requests were in flight by Little's law over the responses: 100% of attempts got no response (refused): the target collapsed, not the generator (also 2 connections)",
			},
		},
		{
			name: "a target slower than the timeout: held load, timeouts, valid",
			r: &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
				heldAt(mk(1, rep(4, 0), rep(4, 1), "timeout", 0), 1),
			}},
			rules: plan.DefaultRules,
			bp:    result.BreakingPoints{FirstFailure: pt(1, 0)},
			valid: true,
			diagnosis: []string{
				"first failure at 1 connection: timeout on 100% of attempts (the client's own deadline passed first)",
				"at 1 connection the generator held its load (load held 100%) but only 0 requests were in flight by Little's law over the responses: 100% of attempts got no response (timeout): the target collapsed, not the generator",
			},
			notInAnyOne: []string{"did not hold", "generator-limited"},
		},
		{
			name: "cap",
			r: &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
				clean(1, 100, ms(10)), clean(2, 200, ms(10)), clean(4, 390, ms(10)),
				mk(8, []int64{400, 398, 401, 400, 402}, []int64{420, 410, 400, 405, 399}, "429", ms(10)),
				mk(16, []int64{399, 400, 400, 401, 397}, []int64{1210, 1190, 1200, 1205, 1201}, "429", ms(10)),
				mk(32, []int64{403, 400, 399, 400, 400}, []int64{2800, 2790, 2810, 2805, 2800}, "429", ms(10)),
			}},
			rules: plan.DefaultRules,
			peak:  400.4, bp: result.BreakingPoints{Knee: pt(4, 390), FirstFailure: pt(8, 400.2)},
			capacity: pt(4, 390), valid: true,
			diagnosis: []string{
				"successes pinned near 400/s while 429s took the rest: a rate limit, not a capacity (failures every second from 8 connections on; 429: a limiter declining on purpose)",
				"first failure at 8 connections: 429 on 50% of attempts (a limiter declining on purpose)",
			},
			notInAnyOne: []string{"cliff", "depleting"},
		},
		{
			name: "depletion across a level change",
			r: &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
				clean(1, 100, ms(10)), clean(2, 200, ms(10)), clean(4, 400, ms(10)),
				mk(8, []int64{400, 400, 150, 0, 0}, []int64{0, 0, 250, 400, 400}, "503", ms(10)),
				mk(16, rep(5, 0), rep(5, 800), "503", ms(1)),
			}},
			rules: plan.DefaultRules,
			peak:  400, bp: result.BreakingPoints{Knee: pt(4, 400), FirstFailure: pt(8, 190)},
			capacity: pt(4, 400), valid: true,
			diagnosis: []string{
				"clean for 4450 requests, then only failures from second 3 at 8 connections on (503: shedding: capacity ran out): a depleting resource",
			},
			notInAnyOne: []string{"a cliff", "a working cap"},
		},
		{
			name: "total failure from a level change is a cliff, not depletion",
			r: &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
				clean(1, 100, ms(10)), clean(2, 200, ms(10)),
				heldAt(mk(4, rep(5, 0), rep(5, 3000), "refused", 0), 0),
			}},
			rules: plan.DefaultRules,
			peak:  200, bp: result.BreakingPoints{Knee: pt(2, 200), FirstFailure: pt(4, 0)},
			capacity: pt(2, 200), valid: true,
			diagnosis: []string{
				"no failures below 4 connections, then only failures, every second from it on: a cliff (refused: the server never answered: connection refused)",
			},
			notInAnyOne: []string{"depleting"},
		},
		{
			name: "steady successes at one failing level are not a cap",
			r: &result.Result{Mode: plan.ModeRate, Steps: []result.Step{
				mk(10, rep(10, 9), rep(10, 1), "500", ms(10)),
			}},
			rules: plan.DefaultRules,
			peak:  9, bp: result.BreakingPoints{Knee: pt(10, 9), FirstFailure: pt(10, 9)},
			valid: true,
			diagnosis: []string{
				"one level only (10 req/s, goodput 9/s)",
				"failures came in 10 of 10 seconds from 10 req/s on, mixed with successes: not a budget running out, a rate held by a limit or a sudden switch to failing",
				"no capacity: no level was within",
			},
			notInAnyOne: []string{"a working cap", "a cliff", "a depleting resource"},
		},
		{
			name: "cliff",
			r: &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
				clean(1, 100, ms(5)), clean(2, 200, ms(5)), clean(4, 390, ms(5)),
				mk(8, []int64{380, 300, 390, 350, 330}, []int64{50, 120, 30, 90, 60}, "503", ms(9)),
				mk(16, []int64{300, 420, 350, 390, 250}, []int64{500, 400, 450, 420, 600}, "503", ms(9)),
			}},
			rules: plan.DefaultRules,
			peak:  390, bp: result.BreakingPoints{Knee: pt(4, 390), FirstFailure: pt(8, 350)},
			capacity: pt(4, 390), valid: true,
			diagnosis: []string{
				"no failures below 8 connections, then failures in every second from it on: a cliff (503: shedding: capacity ran out)",
				"first failure at 8 connections: 503 on 17% of attempts (shedding: capacity ran out)",
			},
			notInAnyOne: []string{"depleting", "working cap"},
		},
		{
			name: "intermittent failures have no shape",
			r: &result.Result{Mode: plan.ModeConcurrency, Steps: []result.Step{
				clean(1, 100, ms(5)),
				mk(2, rep(5, 200), []int64{0, 3, 0, 0, 1}, "reset", ms(5)),
				clean(4, 390, ms(5)),
			}},
			rules: plan.DefaultRules,
			peak:  390, bp: result.BreakingPoints{FirstFailure: pt(2, 200)},
			capacity: pt(1, 100), valid: true,
			diagnosis: []string{
				"failures came in 2 of 10 seconds from 2 connections on, mixed with successes: not a budget running out, a rate held by a limit or a sudden switch to failing",
				"first failure at 2 connections: reset on 0.4% of attempts (the server never answered: connection reset)",
			},
		},
		{
			name: "low load held before the first failure makes the run invalid",
			r:    lowHeld, rules: plan.DefaultRules,
			peak: 405, bp: result.BreakingPoints{Knee: pt(4, 398)}, capacity: pt(4, 405), valid: false,
			diagnosis: []string{
				"at 2 connections the generator kept only 1 attempt in flight (load held 50%): the run did not hold the load it claims",
			},
		},
		{
			name: "phases",
			r: &result.Result{Mode: plan.ModePhases, Steps: []result.Step{
				named(clean(1, 1, ms(5)), "warm up"),
				named(clean(3, 3, ms(5)), "ramp up"),
				named(mk(5, []int64{5, 4, 5, 5, 4}, []int64{0, 1, 0, 0, 1}, "500", ms(5)), "sustained"),
				named(clean(1, 1, ms(5)), "cool down"),
			}},
			rules: plan.DefaultRules,
			peak:  4.6, bp: result.BreakingPoints{FirstFailure: pt(5, 4.6)},
			capacity: pt(3, 3), valid: true,
			diagnosis: []string{
				"knee: not computed for phases",
				`first failure in phase "sustained" (5 req/s): 500 on 8% of attempts (the server failed)`,
				`capacity 3/s in phase "ramp up" (3 req/s): the highest goodput within`,
				"p99 latency stayed within the 200ms budget in every phase (highest: 5ms in phase \"warm up\" (1 req/s))",
			},
		},
		{
			name: "rate ramp with an error budget",
			r: &result.Result{Mode: plan.ModeRate, Steps: []result.Step{
				clean(100, 100, ms(5)),
				clean(200, 200, ms(6)),
				mk(400, rep(5, 398), rep(5, 2), "503", ms(7)),
				mk(800, rep(5, 776), rep(5, 24), "500", ms(250)),
			}},
			rules: budget1pct,
			peak:  776, bp: result.BreakingPoints{LatencyBudget: pt(800, 776), FirstFailure: pt(800, 776)},
			capacity: pt(400, 398), valid: true,
			diagnosis: []string{
				"throughput still rising at the last level, 800 req/s (goodput 776/s, the peak, 95% above the level below): the knee is not reached up to 800 req/s",
				"p99 latency exceeded the 200ms budget at 800 req/s",
				"first failure at 800 req/s (error ratio 3%, above the 1% budget): 500 on 3% of attempts (the server failed)",
				"capacity 398/s at 400 req/s: the highest goodput within the 200ms p99 budget and the 1% error budget",
			},
		},
		{
			name: "a level that recovers past a breach does not raise capacity",
			r: &result.Result{Mode: plan.ModeRate, Steps: []result.Step{
				clean(100, 100, ms(5)),
				clean(200, 200, ms(300)),
				clean(400, 400, ms(5)),
			}},
			rules: plan.DefaultRules,
			peak:  400, bp: result.BreakingPoints{LatencyBudget: pt(200, 200)},
			capacity: pt(100, 100), valid: true,
		},
		{
			name: "no steps", r: &result.Result{Mode: plan.ModeConcurrency}, rules: plan.DefaultRules,
			valid: false, diagnosis: []string{"no step was measured"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			Analyze(tc.r, tc.rules)
			r := tc.r
			if !approx(r.PeakThroughput, tc.peak, 1e-9) {
				t.Errorf("peak = %v, want %v", r.PeakThroughput, tc.peak)
			}
			checkPoint(t, "knee", r.BreakingPoints.Knee, tc.bp.Knee)
			checkPoint(t, "latency_budget", r.BreakingPoints.LatencyBudget, tc.bp.LatencyBudget)
			checkPoint(t, "first_failure", r.BreakingPoints.FirstFailure, tc.bp.FirstFailure)
			checkPoint(t, "capacity", r.Capacity, tc.capacity)
			if r.Valid != tc.valid {
				t.Errorf("valid = %v, want %v", r.Valid, tc.valid)
			}
			checkDiagnosis(t, r.Diagnosis, tc.diagnosis, tc.notInAnyOne)
			if r.Diagnosis == nil {
				t.Error("diagnosis is nil: the JSON would show null")
			}
		})
	}
}

// checkDiagnosis checks that each of want is part of some line of the
// diagnosis and that none of not is part of any.
func checkDiagnosis(t *testing.T, diagnosis, want, not []string) {
	t.Helper()
	all := strings.Join(diagnosis, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("diagnosis lacks %q:\n%s", w, all)
		}
	}
	for _, n := range not {
		if strings.Contains(all, n) {
			t.Errorf("diagnosis has %q:\n%s", n, all)
		}
	}
	if testing.Verbose() {
		t.Logf("diagnosis:\n%s", all)
	}
}

func heldAt(s result.Step, ratio float64) result.Step {
	s.LoadHeldRatio = ratio
	return s
}

func named(s result.Step, name string) result.Step {
	s.Name = name
	return s
}

func checkPoint(t *testing.T, rule string, got, want *result.Point) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s = %v, want %v", rule, got, want)
	case got.Level != want.Level || !approx(got.Throughput, want.Throughput, 1e-9):
		t.Errorf("%s = %+v, want %+v", rule, *got, *want)
	}
}

func TestAnalysisNeverFiredIsJSONNull(t *testing.T) {
	r := reference()
	r.Steps = r.Steps[:6] // up to 32 connections: within every budget
	Analyze(r, plan.DefaultRules)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"latency_budget":null`, `"first_failure":null`, `"knee":{"level":4,"throughput":398,"bracket":[2,4]}`, `"capacity":{"level":4,"throughput":405}`, `"falls_past_peak":false`, `"reached_up_to":32`, `"limiter":null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

func TestAnalysisPickQuantile(t *testing.T) {
	for _, c := range []struct {
		q    float64
		want string
	}{
		{0.5, "p50"}, {0.3, "p50"}, {0.9, "p90"}, {0.95, "p95"}, {0.98, "p99"}, {0.99, "p99"},
		{0.995, "p99.9"}, {0.999, "p99.9"}, {0.9999, "max"}, {1, "max"},
	} {
		if got, _ := LatencyRule(plan.Rules{LatencyQuantile: c.q}); got.Label != c.want {
			t.Errorf("LatencyRule with latency_quantile %v reads %s, want %s", c.q, got.Label, c.want)
		}
	}
}

func TestAnalysisRulesAreApplied(t *testing.T) {
	// p95 with a 100ms budget: the reference's p95 (0.9 × p99) crosses it at 64.
	rules := plan.Rules{KneeFraction: 0.45, LatencyQuantile: 0.95, LatencyBudget: model.Duration(100 * time.Millisecond)}
	r := reference()
	Analyze(r, rules)
	checkPoint(t, "knee", r.BreakingPoints.Knee, pt(2, 200))
	checkPoint(t, "latency_budget", r.BreakingPoints.LatencyBudget, pt(64, 400))
	checkPoint(t, "capacity", r.Capacity, pt(4, 405))
	if !strings.Contains(strings.Join(r.Diagnosis, "\n"), "p95 latency exceeded the 100ms budget at 64 connections (the latency budget: p95 108ms") {
		t.Errorf("diagnosis:\n%s", strings.Join(r.Diagnosis, "\n"))
	}
}

func TestAnalysisHeldRatioOnlyUpToFirstFailure(t *testing.T) {
	r := reference()
	r.Steps[9].LoadHeldRatio = 0.95 // 512 held: valid
	r.Steps = append(r.Steps, mk(1024, rep(5, 10), rep(5, 500), "timeout", ms(950)))
	r.Steps[10].LoadHeldRatio = 0.01 // past the first failure: does not count
	Analyze(r, plan.DefaultRules)
	if !r.Valid {
		t.Errorf("valid = false, want true:\n%s", strings.Join(r.Diagnosis, "\n"))
	}
}

func TestAnalysisFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtNum(398.4), "398"}, {fmtNum(41), "41"}, {fmtNum(10.24), "10.2"}, {fmtNum(0.0123), "0.0123"}, {fmtNum(0), "0"},
		{fmtSeconds(0.0102), "10.2ms"}, {fmtSeconds(0.041), "41ms"}, {fmtSeconds(2.5), "2.5s"}, {fmtSeconds(42e-6), "42µs"},
		{fmtPct(0.37), "37%"}, {fmtPct(0.032), "3.2%"}, {fmtPct(0.9996), "99.9%"}, {fmtPct(1), "100%"}, {fmtPct(0.95), "95%"},
		{plan.FormatLevel(512), "512"}, {plan.FormatLevel(2.5), "2.5"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func approx(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}
