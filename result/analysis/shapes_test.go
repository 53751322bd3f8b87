package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// binomial draws how many of n attempts succeed with probability p.
func binomial(rng *rand.Rand, n int64, p float64) int64 {
	var k int64
	for range n {
		if rng.Float64() < p {
			k++
		}
	}
	return k
}

// coin is a level of a target that fails each attempt with probability
// fail, at attempts per second varying by ±jitter: its per-second counts.
func coin(rng *rand.Rand, level float64, attempts int64, jitter, fail float64, kind string) result.Step {
	succ, failed := make([]int64, 5), make([]int64, 5)
	for i := range succ {
		n := attempts + int64((rng.Float64()*2-1)*jitter*float64(attempts))
		succ[i] = binomial(rng, n, 1-fail)
		failed[i] = n - succ[i]
	}
	return mk(level, succ, failed, kind, ms(5))
}

// capped is a level of a target that admits at most limit a second, at
// the given attempts per second: the rest fail as kind.
func capped(level float64, limit int64, attempts []int64, kind string) result.Step {
	succ, failed := make([]int64, len(attempts)), make([]int64, len(attempts))
	for i, n := range attempts {
		succ[i] = min(n, limit)
		failed[i] = n - succ[i]
	}
	return mk(level, succ, failed, kind, ms(5))
}

// TestShapes is the reference suite of failure shapes (docs/design.md,
// "Failure shapes"): each case a timeline of per-second counts as a target with
// that behaviour gives them, the line that must name it and the names it
// must not be given.
func TestShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 30))
	tests := []struct {
		name  string
		mode  plan.Mode
		steps []result.Step
		want  []string
		not   []string
	}{
		{
			name: "cliff",
			mode: plan.ModeConcurrency,
			steps: []result.Step{
				clean(1, 100, ms(5)), clean(2, 200, ms(5)), clean(4, 390, ms(5)),
				mk(8, []int64{380, 300, 390, 350, 330}, []int64{50, 120, 30, 90, 60}, "503", ms(9)),
				mk(16, []int64{300, 420, 350, 390, 250}, []int64{500, 400, 450, 420, 600}, "503", ms(9)),
			},
			want: []string{"no failures below 8 connections, then failures in every second from it on: a cliff (503: shedding: capacity ran out)"},
			not:  []string{"pinned", "depleting", "more load, less work"},
		},
		{
			name:  "cap at one level, closed loop",
			mode:  plan.ModeConcurrency,
			steps: []result.Step{capped(10, 400, []int64{29100, 28400, 29800, 29300, 27900}, "429")},
			want:  []string{"successes pinned near 400/s while 429s took the rest: a rate limit, not a capacity"},
			not:   []string{"depleting", "cliff", "not a budget running out"},
		},
		{
			name:  "cap at one level, open loop at a steady rate",
			mode:  plan.ModeRate,
			steps: []result.Step{capped(1000, 400, []int64{1000, 1000, 1000, 999, 1000}, "429")},
			want:  []string{"successes pinned near 400/s while 429s took the rest: a rate limit, not a capacity"},
			not:   []string{"not a budget running out"},
		},
		{
			// A token bucket starts full: its first second lets through
			// the burst and the rate, then only the rate.
			name:  "cap after a leading burst, one level",
			mode:  plan.ModeConcurrency,
			steps: []result.Step{mk(10, []int64{800, 400, 400, 400}, []int64{24100, 25800, 25500, 25900}, "429", ms(1))},
			want:  []string{"successes pinned near 400/s while 429s took the rest: a rate limit, not a capacity (failures every second from 10 connections on"},
			not:   []string{"not a budget running out"},
		},
		{
			name: "cap after a leading burst at every level",
			mode: plan.ModeConcurrency,
			steps: []result.Step{
				mk(10, []int64{800, 400, 400, 400}, []int64{24100, 25800, 25500, 25900}, "429", ms(1)),
				mk(20, []int64{790, 401, 400, 399}, []int64{30100, 31800, 32500, 31900}, "429", ms(1)),
				mk(40, []int64{805, 400, 400, 400}, []int64{33100, 33800, 33500, 33900}, "429", ms(1)),
			},
			want: []string{"successes pinned near 400/s while 429s took the rest: a rate limit, not a capacity"},
			not:  []string{"not a budget running out"},
		},
		{
			name:  "a flat cap over four seconds",
			mode:  plan.ModeConcurrency,
			steps: []result.Step{mk(10, []int64{400, 400, 400, 400}, []int64{24100, 25800, 25500, 25900}, "429", ms(1))},
			want:  []string{"successes pinned near 400/s while 429s took the rest: a rate limit, not a capacity"},
		},
		{
			// A first second with twice the attempts and the same share of
			// successes is a coin, not a burst.
			name:  "a busier first second under a fixed failure probability is not a cap",
			mode:  plan.ModeRate,
			steps: []result.Step{mk(1000, []int64{1400, 700, 690, 705}, []int64{600, 300, 310, 295}, "503", ms(1))},
			not:   []string{"pinned"},
		},
		{
			name: "cap across levels, shedding",
			mode: plan.ModeRate,
			steps: []result.Step{
				clean(500, 500, ms(5)), clean(1000, 1000, ms(5)),
				capped(2000, 1500, []int64{2000, 2000, 2000, 2000, 2000}, "503"),
				capped(4000, 1500, []int64{3990, 4000, 4000, 4010, 4000}, "503"),
			},
			want: []string{"successes pinned near 1500/s while 503s took the rest: a working cap (failures every second from 2000 req/s on; 503: shedding: capacity ran out)"},
			not:  []string{"rate limit", "more load, less work"},
		},
		{
			name: "depletion",
			mode: plan.ModeConcurrency,
			steps: []result.Step{
				clean(1, 100, ms(10)), clean(2, 200, ms(10)), clean(4, 400, ms(10)),
				mk(8, []int64{400, 400, 150, 0, 0}, []int64{0, 0, 250, 400, 400}, "503", ms(10)),
				mk(16, rep(5, 0), rep(5, 800), "503", ms(1)),
			},
			want: []string{"clean for 4450 requests, then only failures from second 3 at 8 connections on (503: shedding: capacity ran out): a depleting resource"},
			not:  []string{"cliff", "pinned", "more load, less work"},
		},
		{
			name: "collapse: timeouts grow with the level, then goodput falls",
			mode: plan.ModeConcurrency,
			steps: []result.Step{
				clean(64, 300, ms(150)), clean(128, 319, ms(300)),
				mk(256, []int64{190, 185, 195, 180, 190}, []int64{80, 85, 75, 82, 80}, "timeout", ms(900)),
				mk(512, []int64{120, 60, 0, 0, 0}, []int64{500, 600, 700, 650, 700}, "timeout", ms(990)),
			},
			want: []string{
				"more load, less work done: goodput fell from 319/s at 128 connections (the peak) to 36/s at 512 connections, 89% less; timeouts on 76% of attempts past the peak: the target likely kept serving work the client had already abandoned",
				"no failures below 256 connections, then failures in every second from it on: a cliff",
			},
			not: []string{"depleting"},
		},
		{
			name: "collapse: 5xx",
			mode: plan.ModeRate,
			steps: []result.Step{
				clean(100, 100, ms(5)), clean(200, 200, ms(5)),
				mk(400, rep(5, 90), rep(5, 310), "500", ms(5)),
			},
			want: []string{"more load, less work done: goodput fell from 200/s at 200 req/s (the peak) to 90/s at 400 req/s, 55% less; 500s on 78% of attempts past the peak: the target gave up under the load"},
		},
		{
			name:  "a fixed failure probability at one level is not a cap",
			mode:  plan.ModeConcurrency,
			steps: []result.Step{coin(rng, 10, 20000, 0.03, 0.3, "503")},
			want:  []string{"not a budget running out, a rate held by a limit or a sudden switch to failing"},
			not:   []string{"pinned"},
		},
		{
			name:  "a fixed failure probability at a steady rate is not a cap",
			mode:  plan.ModeRate,
			steps: []result.Step{coin(rng, 1000, 1000, 0, 0.3, "503")},
			want:  []string{"not a budget running out, a rate held by a limit or a sudden switch to failing"},
			not:   []string{"pinned"},
		},
		{
			name: "a fixed failure probability across levels is not a cap",
			mode: plan.ModeConcurrency,
			steps: []result.Step{
				coin(rng, 2, 2000, 0.03, 0.3, "500"),
				coin(rng, 4, 2100, 0.03, 0.3, "500"),
			},
			not: []string{"pinned"},
		},
		{
			name: "overload growing with the level is not depletion",
			mode: plan.ModeConcurrency,
			steps: []result.Step{
				clean(128, 319, ms(300)),
				mk(256, rep(5, 250), rep(5, 40), "timeout", ms(950)),
				mk(512, rep(5, 150), rep(5, 300), "timeout", ms(990)),
				mk(1024, []int64{90, 0, 0, 0, 0}, rep(5, 1000), "timeout", ms(999)),
			},
			want: []string{"more load, less work done: goodput fell from 319/s at 128 connections (the peak) to 18/s at 1024 connections"},
			not:  []string{"depleting"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Result{Mode: tc.mode, Steps: tc.steps}
			Analyze(r, plan.DefaultRules)
			checkDiagnosis(t, r.Diagnosis, tc.want, tc.not)
		})
	}
}
