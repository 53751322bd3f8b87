package prober

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// figures is what a simulated target shows at one level: its goodput, the
// p99 of its successes and its error ratio.
type figures struct {
	goodput    float64
	p99        time.Duration
	errorRatio float64
}

// simulate runs the search of p against target, a function from level to
// figures (the n-th reading of a level as its second argument, from 1), as
// the engine runs a plan: each step is measured, then the plan decides the
// next. It returns the steps and the analysis of the run.
func simulate(t *testing.T, p *plan.Probe, target func(level float64, reading int) figures) result.Result {
	t.Helper()
	plan := newPlanner(p, fleet.Shard{})
	r := result.Result{Mode: p.Load.Mode(), Steps: []result.Step{}}
	readings := map[float64]int{}
	for st, more := plan.next(r.Steps); more; st, more = plan.next(r.Steps) {
		if len(r.Steps) >= plan.most() {
			t.Fatalf("the plan offers step %d of at most %d", len(r.Steps)+1, plan.most())
		}
		readings[st.level]++
		f := target(st.level, readings[st.level])
		attempts := int64(math.Round(f.goodput / (1 - min(f.errorRatio, 0.999))))
		q := f.p99.Seconds()
		r.Steps = append(r.Steps, result.Step{
			Level: st.fleetLevel, DurationSeconds: 1, Attempts: attempts,
			Goodput: f.goodput, Throughput: f.goodput, ErrorRatio: f.errorRatio,
			Latency:       result.Latency{Mean: q / 2, P50: q / 2, P90: q * 0.8, P95: q * 0.9, P99: q, P999: q, Max: q},
			Errors:        map[string]int64{"timeout": int64(f.errorRatio * float64(attempts))},
			LoadHeldRatio: 1, Search: st.search,
		})
	}
	analysis.Analyze(&r, p.Rules)
	return r
}

// pool is a worker pool of 12 serving 20ms each: 50/s per connection up
// to 12 connections, 600/s beyond, with the queue's wait beyond.
func pool(level float64, _ int) figures {
	return figures{goodput: 50 * min(level, 12), p99: time.Duration(float64(20*time.Millisecond) * max(1, level/12))}
}

func searchProbe(t *testing.T, search string) *plan.Probe {
	t.Helper()
	return probeFor(t, "http://127.0.0.1:1/", "search: "+search+"\nstep_duration: 1s")
}

// checkGrowth fails when a step offered more than twice the highest level
// measured before it that broke no rule: within both budgets and below
// abort.error_ratio.
func checkGrowth(t *testing.T, p *plan.Probe, r result.Result) {
	t.Helper()
	lq, budget := analysis.LatencyRule(p.Rules)
	clean := 0.0
	for i, s := range r.Steps {
		if i > 0 && s.Level > 2*clean {
			t.Errorf("step %d offered %g, more than twice %g, the highest level that broke no rule before it", i+1, s.Level, clean)
		}
		if lq.Of(s.Latency) <= budget && s.ErrorRatio <= p.Rules.ErrorRatioBudget {
			clean = max(clean, s.Level)
		}
	}
}

func checkBracket(t *testing.T, r result.Result, rule result.Rule, below, at float64) {
	t.Helper()
	bp := r.BreakingPoints.Of(rule)
	if bp == nil || bp.Bracket != [2]float64{below, at} {
		t.Errorf("%s %+v, want bracket [%g %g]; levels %v", rule.Text(), bp, below, at, levels(r))
	}
}

func TestSearchRisesThenPlateaus(t *testing.T) {
	p := searchProbe(t, "{concurrency: {from: 1, max: 256}, precision: 0.1}")
	r := simulate(t, p, pool)
	checkBracket(t, r, result.RuleKnee, 11, 12)
	checkGrowth(t, p, r)
	if r.BreakingPoints.LatencyBudget != nil || r.BreakingPoints.FirstFailure != nil {
		t.Errorf("breaking points %+v: the search grew past the knee", r.BreakingPoints)
	}
	if r.Capacity == nil || r.Capacity.Throughput != 600 {
		t.Errorf("capacity %+v, want 600/s", r.Capacity)
	}
	// 1, 2, 4, 8, 16 grow; 32 shows the plateau; 12, 10, 11 refine.
	want := []float64{1, 2, 4, 8, 16, 32, 12, 10, 11}
	if fmt.Sprint(levels(r)) != fmt.Sprint(want) {
		t.Errorf("levels %v, want %v", levels(r), want)
	}
	for i, s := range r.Steps {
		if want := result.SearchGrow; i >= 6 {
			if s.Search != result.SearchRefine {
				t.Errorf("step %d (level %g) is %q, want refine", i+1, s.Level, s.Search)
			}
		} else if s.Search != want {
			t.Errorf("step %d (level %g) is %q, want grow", i+1, s.Level, s.Search)
		}
	}
}

// By rate the budget fires where the offered rate passes what the pool
// serves: the queue, and the wait in it, grows with every second.
func TestSearchByRateBracketsTheLatencyBudget(t *testing.T) {
	p := searchProbe(t, "{rate: {from: 50, max: 5000}, precision: 0.05}")
	p.Rules.LatencyBudget = model.Duration(50 * time.Millisecond)
	r := simulate(t, p, func(rate float64, _ int) figures {
		// The wait at the end of a 1s step: the requests queued in it.
		wait := time.Duration(max(0, rate-600) / 600 * float64(time.Second))
		return figures{goodput: min(rate, 600), p99: 20*time.Millisecond + wait}
	})
	// 30ms of wait takes 3% more than 600 req/s: 618.
	bp := r.BreakingPoints.LatencyBudget
	if bp == nil || bp.Bracket[0] > 618 || bp.Bracket[1] < 618 || bp.Bracket[1]-bp.Bracket[0] > 0.05*bp.Bracket[1] {
		t.Errorf("latency budget %+v, want a bracket within 5%% around 618 req/s; levels %v", bp, levels(r))
	}
	checkGrowth(t, p, r)
}

// A target whose goodput collapses past 16 connections, failing from 24:
// the first failure is bracketed, and once it is known no level at or
// above it runs again.
func TestSearchCollapses(t *testing.T) {
	p := searchProbe(t, "{concurrency: {from: 1, max: 1024}, precision: 0.1}")
	r := simulate(t, p, func(level float64, _ int) figures {
		if level >= 24 {
			return figures{goodput: 100, p99: time.Second, errorRatio: 0.6}
		}
		return figures{goodput: 40 * min(level, 16), p99: 10 * time.Millisecond}
	})
	// 10% of 24 is 2.4 connections: [22, 24] is known well enough.
	checkBracket(t, r, result.RuleFirstFailure, 22, 24)
	checkBracket(t, r, result.RuleKnee, 15, 16)
	checkGrowth(t, p, r)
	first := -1
	for i, s := range r.Steps {
		if first >= 0 && s.Level >= r.Steps[first].Level {
			t.Errorf("step %d offered %g, at or above the known first failure %g", i+1, s.Level, r.Steps[first].Level)
		}
		if first < 0 && s.ErrorRatio > 0 {
			first = i
		}
	}
	if r.Steps[len(r.Steps)-1].Level >= 24 {
		t.Errorf("levels %v", levels(r))
	}
}

func TestSearchFailsAtTheFirstLevel(t *testing.T) {
	p := searchProbe(t, "{rate: {from: 50, max: 5000}}")
	r := simulate(t, p, func(float64, int) figures { return figures{errorRatio: 1} })
	if len(r.Steps) != 1 {
		t.Errorf("levels %v, want the first only: nothing below from is searched", levels(r))
	}
	checkBracket(t, r, result.RuleFirstFailure, 0, 50)
}

func TestSearchNeverBreaksBeforeMax(t *testing.T) {
	p := searchProbe(t, "{concurrency: {from: 3, max: 150}}")
	r := simulate(t, p, func(level float64, _ int) figures {
		return figures{goodput: 50 * level, p99: 20 * time.Millisecond}
	})
	want := []float64{3, 6, 12, 24, 48, 96, 150}
	if fmt.Sprint(levels(r)) != fmt.Sprint(want) {
		t.Errorf("levels %v, want %v: doubling up to max, then max", levels(r), want)
	}
	if r.BreakingPoints.LatencyBudget != nil || r.BreakingPoints.FirstFailure != nil {
		t.Errorf("breaking points %+v on a target that never broke", r.BreakingPoints)
	}
}

// A reading that dips inside a rising stretch is measured once more before
// the knee's bracket rests on it; the second reading is the one that
// counts.
func TestSearchMeasuresANoisyLevelAgain(t *testing.T) {
	p := searchProbe(t, "{concurrency: {from: 1, max: 256}, precision: 0.1}")
	r := simulate(t, p, func(level float64, reading int) figures {
		f := pool(level, reading)
		if level == 4 && reading == 1 {
			f.goodput = 90 // the machine was busy: half what 4 workers serve
		}
		if level == 10 && reading == 1 {
			f.p99 = 300 * time.Millisecond // a pause, above the 200ms budget
		}
		return f
	})
	counts := map[float64]int{}
	for _, s := range r.Steps {
		counts[s.Level]++
	}
	if counts[4] != 2 || counts[10] != 2 {
		t.Errorf("levels %v: want 4 (a goodput dip) and 10 (a latency spike below a level within budget) measured twice", levels(r))
	}
	checkBracket(t, r, result.RuleKnee, 11, 12)
	if r.BreakingPoints.LatencyBudget != nil {
		t.Errorf("latency budget %+v: the spike was noise", r.BreakingPoints.LatencyBudget)
	}
	if i := indexOf(r, 4); i < 0 || i+1 >= len(r.Steps) || r.Steps[i+1].Level != 4 {
		t.Errorf("levels %v: the dip at 4 must be measured again before the search moves on", levels(r))
	}
}

func indexOf(r result.Result, level float64) int {
	for i, s := range r.Steps {
		if s.Level == level {
			return i
		}
	}
	return -1
}

// max_steps ends the search, refined or not; abort.error_ratio is a
// ceiling the search stays below, as the first failure is.
func TestSearchStopsAtMaxStepsAndBelowAbort(t *testing.T) {
	p := searchProbe(t, "{concurrency: {from: 1, max: 256}, max_steps: 7}")
	if r := simulate(t, p, pool); len(r.Steps) != 7 {
		t.Errorf("levels %v, want 7", levels(r))
	}

	p = searchProbe(t, "{concurrency: {from: 1, max: 256}}")
	p.Rules.ErrorRatioBudget = 0.9 // the first failure would fire past the abort ratio
	r := simulate(t, p, func(level float64, _ int) figures {
		if level >= 40 {
			return figures{goodput: 100, p99: 10 * time.Millisecond, errorRatio: 0.7}
		}
		return figures{goodput: 10 * level, p99: 10 * time.Millisecond}
	})
	for _, s := range r.Steps[indexOf(r, 64)+1:] {
		if s.Level >= 64 {
			t.Errorf("levels %v: %g offered after 64 broke abort.error_ratio", levels(r), s.Level)
		}
	}
	if last := r.Steps[len(r.Steps)-1]; len(r.Steps) < 8 {
		t.Errorf("levels %v (last %g): want the search to go on below the abort level", levels(r), last.Level)
	}
}
