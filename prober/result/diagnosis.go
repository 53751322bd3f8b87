package result

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadprobe/loadprobe/config"
)

// diagnose explains the analysis in plain language, one finding a line, each
// naming the rule and the numbers behind it: the knee, the latency budget,
// the first failure, the shape of the failures over time, the capacity and
// whether the run held its load.
func (a *analysis) diagnose() []string {
	if len(a.r.Steps) == 0 {
		return []string{"no step was measured: nothing to analyze"}
	}
	out := make([]string, 0, 6)
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	add(a.kneeLine())
	add(a.latencyLine())
	add(a.failureLine())
	add(a.shapeLine())
	add(a.capacityLine())
	add(a.shortfallLine())
	add(a.heldLine())
	return out
}

// shortfallLine names the open-loop levels whose achieved rate fell short of
// the offered one: the target did not keep up.
func (a *analysis) shortfallLine() string {
	if a.closedLoop() {
		return ""
	}
	var short []Step
	for _, s := range a.r.Steps {
		if s.LoadHeldRatio < heldRatio {
			short = append(short, s)
		}
	}
	if len(short) == 0 {
		return ""
	}
	s := short[0]
	line := fmt.Sprintf("%s only %s responses per second came back (load held %s", a.at(s), fmtNum(s.Throughput), fmtPct(s.LoadHeldRatio))
	if s.Dropped > 0 {
		line += fmt.Sprintf(", %d requests dropped at max_in_flight", s.Dropped)
	}
	line += "): the target did not keep up with the offered rate"
	return line + a.also(short[1:])
}

// also names more levels where a line's finding holds too: " (also 16
// connections, 32 connections)"; empty when there are none.
func (a *analysis) also(steps []Step) string {
	if len(steps) == 0 {
		return ""
	}
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = a.levelText(s)
	}
	return " (also " + strings.Join(names, ", ") + ")"
}

// Shape thresholds (DESIGN point 7).
const (
	// A cap's successes per second stay within this fraction of their median
	// (or within one request, for small counts) ...
	capTolerance = 0.10
	// ... in at least this share of the failing seconds, and failures come in
	// at least this share of them ("nearly every second": one second may
	// straddle a level change or a limiter's window).
	nearlyAll = 0.9
)

func (a *analysis) kneeLine() string {
	steps := a.r.Steps
	if a.r.Mode == config.ModePhases {
		return "knee: not computed for phases (the rule reads an escalating ramp, not a profile)"
	}
	if a.knee < 0 {
		return "no successful response at any level: no throughput curve, no knee"
	}
	k, peak := steps[a.knee], steps[a.peak]
	frac := fmtPct(a.kneeFraction)
	switch {
	case len(steps) == 1:
		return fmt.Sprintf("one level only (%s, goodput %s/s): the knee rule fires there, but one level cannot show where throughput stops improving",
			a.levelText(k), fmtNum(k.Goodput))
	case a.knee == len(steps)-1:
		return fmt.Sprintf("throughput still rising at the last level, %s (goodput %s/s, the peak): the knee (first level within %s of the peak) lies at or beyond the end of the ramp",
			a.levelText(k), fmtNum(k.Goodput), frac)
	}
	line := fmt.Sprintf("throughput stopped improving %s (the knee: goodput %s/s, within %s of the %s/s peak)",
		a.at(k), fmtNum(k.Goodput), frac, fmtNum(peak.Goodput))
	if a.knee == a.peak {
		line = fmt.Sprintf("throughput stopped improving %s (the knee: goodput %s/s is the peak)", a.at(k), fmtNum(k.Goodput))
	}
	return line + a.latencyAfter(a.knee)
}

// latencyAfter describes how the budget's quantile moves from step i to the
// last step with responses.
func (a *analysis) latencyAfter(i int) string {
	steps := a.r.Steps
	last := -1
	lo, hi := math.Inf(1), 0.0
	for j := i; j < len(steps); j++ {
		if steps[j].Throughput <= 0 {
			continue
		}
		v := a.quantile.Of(steps[j].Latency)
		lo, hi = min(lo, v), max(hi, v)
		if j > i {
			last = j
		}
	}
	q0 := a.quantile.Of(steps[i].Latency)
	if last < 0 || q0 <= 0 {
		return ""
	}
	q1 := a.quantile.Of(steps[last].Latency)
	lab := a.quantile.Label
	if q1 >= 1.5*q0 {
		return fmt.Sprintf("; %s grows from %s to %s after it (%s)", lab, fmtSeconds(q0), fmtSeconds(q1), a.at(steps[last]))
	}
	if lo == hi {
		return fmt.Sprintf("; %s stays at %s after it", lab, fmtSeconds(lo))
	}
	return fmt.Sprintf("; %s stays between %s and %s after it", lab, fmtSeconds(lo), fmtSeconds(hi))
}

func (a *analysis) latencyLine() string {
	steps := a.r.Steps
	lab, budget := a.quantile.Label, fmtSeconds(a.budget)
	if a.latency >= 0 {
		s := steps[a.latency]
		return fmt.Sprintf("%s latency exceeded the %s budget %s (the latency budget: %s %s, goodput %s/s)",
			lab, budget, a.at(s), lab, fmtSeconds(a.quantile.Of(s.Latency)), fmtNum(s.Goodput))
	}
	h := -1
	for i, s := range steps {
		if s.Throughput > 0 && (h < 0 || a.quantile.Of(s.Latency) > a.quantile.Of(steps[h].Latency)) {
			h = i
		}
	}
	if h < 0 {
		return fmt.Sprintf("no response at any level: the %s %s budget could not be judged", budget, lab)
	}
	return fmt.Sprintf("%s latency stayed within the %s budget %s (highest: %s %s)",
		lab, budget, a.everyLevel(), fmtSeconds(a.quantile.Of(steps[h].Latency)), a.at(steps[h]))
}

func (a *analysis) failureLine() string {
	steps := a.r.Steps
	if a.failure >= 0 {
		s := steps[a.failure]
		head := "first failure " + a.at(s)
		if a.errBudget > 0 {
			head += fmt.Sprintf(" (error ratio %s, above the %s budget)", fmtPct(s.ErrorRatio), fmtPct(a.errBudget))
		}
		return head + ": " + describeFailures(s)
	}
	w := -1
	for i, s := range steps {
		if s.ErrorRatio > 0 && (w < 0 || s.ErrorRatio > steps[w].ErrorRatio) {
			w = i
		}
	}
	if w < 0 {
		return "no attempt failed " + a.anyLevel()
	}
	return fmt.Sprintf("error ratio stayed within the %s budget %s (highest: %s %s, %s)",
		fmtPct(a.errBudget), a.everyLevel(), fmtPct(steps[w].ErrorRatio), a.at(steps[w]), describeFailures(steps[w]))
}

func (a *analysis) capacityLine() string {
	budgets := fmt.Sprintf("the %s %s budget and ", fmtSeconds(a.budget), a.quantile.Label)
	if a.errBudget == 0 {
		budgets += "without a failed attempt"
	} else {
		budgets += "the " + fmtPct(a.errBudget) + " error budget"
	}
	if a.capacity < 0 {
		return "no capacity: no level was within " + budgets
	}
	s := a.r.Steps[a.capacity]
	return fmt.Sprintf("capacity %s/s %s: the highest level within %s", fmtNum(s.Goodput), a.at(s), budgets)
}

// heldLine names the levels that make the run invalid: those up to the first
// failure that did not hold their load.
func (a *analysis) heldLine() string {
	var bad []Step
	for _, s := range a.r.Steps[:a.validUpTo()+1] {
		if !a.held(s) {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	s := bad[0]
	var line string
	switch {
	case s.Attempts == 0:
		line = fmt.Sprintf("%s no attempt completed", a.at(s))
	case a.closedLoop():
		n, were := fmtNum(s.InFlight), "requests were"
		if n == "1" {
			were = "request was"
		}
		line = fmt.Sprintf("%s only %s %s in flight (load held %s)", a.at(s), n, were, fmtPct(s.LoadHeldRatio))
	default:
		line = fmt.Sprintf("%s the generator sent only %s requests per second", a.at(s), fmtNum(sentRate(s)))
	}
	if noResp := noResponses(s); s.Attempts > 0 && noResp*2 > s.Attempts {
		line += fmt.Sprintf(", %s of attempts got no response (%s)", fmtPct(float64(noResp)/float64(s.Attempts)), topReason(s))
	}
	line += ": the run did not hold the load it claims"
	return line + a.also(bad[1:])
}

// tick is one whole second of one step.
type tick struct {
	step, sec        int
	success, failure int64
}

func (a *analysis) timeline() []tick {
	var tl []tick
	for i, s := range a.r.Steps {
		for j, ps := range s.PerSecond {
			tl = append(tl, tick{i, j, ps.Success, ps.Failure})
		}
	}
	return tl
}

// shapeLine names the shape of the failures over time (DESIGN point 7),
// reading the per-second counts of all steps in the order they ran: a
// depleting resource, a working cap or a cliff, in that order of precedence.
func (a *analysis) shapeLine() string {
	steps := a.r.Steps
	first := slices.IndexFunc(steps, func(s Step) bool { return s.ErrorRatio > 0 })
	if first < 0 {
		return ""
	}
	tl := a.timeline()
	if len(tl) == 0 {
		return ""
	}
	if a.peak < 0 || steps[a.peak].Goodput == 0 {
		return "" // nothing succeeded: the knee and first-failure lines say it all
	}
	if l := a.depletion(tl); l != "" {
		return l
	}
	if l := a.workingCap(tl); l != "" {
		return l
	}
	if l := a.cliff(tl, first); l != "" {
		return l
	}
	var secs, failing int
	for _, t := range tl {
		if t.step >= first {
			secs++
			if t.failure > 0 {
				failing++
			}
		}
	}
	if secs == 0 {
		return ""
	}
	return fmt.Sprintf("failures came in %d of %d seconds from %s on: no depletion, cap or cliff shape",
		failing, secs, a.levelText(steps[first]))
}

// depletion: successes per second go from healthy to zero in the middle of a
// level and stay zero, across any later levels, while failures continue.
// A switch exactly at a level change is left to the cliff: there the level,
// not the number of requests served, is the likelier cause.
func (a *analysis) depletion(tl []tick) string {
	steps := a.r.Steps
	last := -1
	for i, t := range tl {
		if t.success > 0 {
			last = i
		}
	}
	z := last + 1
	if last < 0 || len(tl)-z < 2 || tl[z].sec == 0 {
		return ""
	}
	failing := 0
	for _, t := range tl[z:] {
		if t.failure > 0 {
			failing++
		}
	}
	if failing < 2 || float64(failing) < nearlyAll*float64(len(tl)-z) {
		return ""
	}
	// The successes before the switch: every success of the run, since none
	// came after it. From the step totals, so partial seconds count too.
	var n float64
	clean := true
	for i, s := range steps {
		n += s.Goodput * s.DurationSeconds
		if i < tl[z].step && s.ErrorRatio > 0 {
			clean = false
		}
	}
	// The last second with successes is the switch itself and may hold both.
	for _, t := range tl[:last] {
		if t.step == tl[z].step && t.failure > 0 {
			clean = false
		}
	}
	health := "clean"
	if !clean {
		health = "healthy"
	}
	sw := steps[tl[z].step]
	return fmt.Sprintf("%s for %d requests, then only failures from second %d %s on (%s): a depleting resource, exhausted after a number of requests rather than at a level",
		health, int64(math.Round(n)), tl[z].sec, a.at(sw), topFailure(steps[tl[z].step:]...))
}

// workingCap: in the failing steps, successes per second stay roughly
// constant (within capTolerance of their median) across seconds and steps
// while failures come in (nearly) every second. It takes two failing levels
// at least: at a single level, a constant success rate beside constant
// failures is what any fixed failure probability gives too; a cap shows as
// successes that do not move when the load does.
func (a *analysis) workingCap(tl []tick) string {
	steps := a.r.Steps
	var secs []tick
	failingSteps := map[int]bool{}
	for _, t := range tl {
		if steps[t.step].ErrorRatio > 0 {
			secs = append(secs, t)
			failingSteps[t.step] = true
		}
	}
	if len(failingSteps) < 2 || len(secs) < 3 {
		return ""
	}
	succ := make([]float64, len(secs))
	failing := 0
	for i, t := range secs {
		succ[i] = float64(t.success)
		if t.failure > 0 {
			failing++
		}
	}
	m := median(succ)
	if m <= 0 || float64(failing) < nearlyAll*float64(len(secs)) {
		return ""
	}
	tol := max(capTolerance*m, 1)
	within := 0
	for _, v := range succ {
		if math.Abs(v-m) <= tol {
			within++
		}
	}
	if float64(within) < nearlyAll*float64(len(secs)) {
		return ""
	}
	from := secs[0].step
	var failSteps []Step
	for i := range steps {
		if failingSteps[i] {
			failSteps = append(failSteps, steps[i])
		}
	}
	every := "every second"
	if failing < len(secs) {
		every = fmt.Sprintf("in %d of %d seconds", failing, len(secs))
	}
	return fmt.Sprintf("successes pinned at ~%s/s while failures came %s from %s: a working cap (%s)",
		fmtNum(m), every, a.levelText(steps[from]), topFailure(failSteps...))
}

// cliff: no failures below a level, and failures in every second from it on.
func (a *analysis) cliff(tl []tick, first int) string {
	steps := a.r.Steps
	if first == 0 {
		return ""
	}
	n := 0
	var after int64
	for _, t := range tl {
		if t.step < first {
			continue
		}
		n++
		if t.failure == 0 {
			return ""
		}
		after += t.success
	}
	if n == 0 {
		return ""
	}
	what := "failures in every second"
	if after == 0 {
		what = "only failures, every second"
	}
	return fmt.Sprintf("no failures below %s, then %s from it on: a cliff (%s)",
		a.levelText(steps[first]), what, topFailure(steps[first:]...))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (a *analysis) closedLoop() bool {
	return a.r.Mode != config.ModeRate && a.r.Mode != config.ModePhases
}

// levelText names a step's load: "4 connections", "400 req/s", or for phases
// `phase "sustained" (5 req/s)`.
func (a *analysis) levelText(s Step) string {
	switch a.r.Mode {
	case config.ModePhases:
		if s.Name == "" {
			return fmt.Sprintf("the phase at %s req/s", fmtLevel(s.Level))
		}
		return fmt.Sprintf("phase %q (%s req/s)", s.Name, fmtLevel(s.Level))
	case config.ModeRate:
		return fmtLevel(s.Level) + " req/s"
	}
	if s.Level == 1 {
		return "1 connection"
	}
	return fmtLevel(s.Level) + " connections"
}

func (a *analysis) at(s Step) string {
	if a.r.Mode == config.ModePhases {
		return "in " + a.levelText(s)
	}
	return "at " + a.levelText(s)
}

func (a *analysis) anyLevel() string {
	if a.r.Mode == config.ModePhases {
		return "in any phase"
	}
	return "at any level"
}

func (a *analysis) everyLevel() string {
	if a.r.Mode == config.ModePhases {
		return "in every phase"
	}
	return "at every level"
}

// failureKind is one kind of failed attempt: a status code or a reason.
type failureKind struct {
	name string
	n    int64
}

// meanings name the failure kinds by what they say about the target (DESIGN
// point 6).
var reasonMeanings = map[string]string{
	"timeout": "the client's own deadline passed first",
	"refused": "the server never answered: connection refused",
	"reset":   "the server never answered: connection reset",
	"tls":     "the TLS handshake failed",
	"dns":     "the name did not resolve",
	"other":   "a transport error",
}

func (k failureKind) meaning() string {
	if m, ok := reasonMeanings[k.name]; ok {
		return m
	}
	code, err := strconv.Atoi(k.name)
	switch {
	case err != nil:
		return "a response outside valid_status_codes"
	case code == 503:
		return "shedding: capacity ran out"
	case code == 429:
		return "a limiter declining on purpose"
	case code == 502:
		return "a proxy's upstream failed"
	case code == 504:
		return "a proxy's upstream was too slow"
	case code == 408:
		return "the server's own request deadline passed"
	case code >= 500:
		return "the server failed"
	case code >= 400:
		return "the server rejected the request"
	case code >= 300:
		return "a redirect, not followed"
	}
	return "an unexpected status"
}

// failureKinds counts the failed attempts of steps by kind, most frequent
// first. Reasons come from Errors; failed responses from Responses, taken as
// the non-2xx codes. A Step does not carry valid_status_codes, so when the
// non-2xx count does not match the failed responses (a custom list), they
// are counted together as responses outside valid_status_codes.
func failureKinds(steps ...Step) []failureKind {
	counts := map[string]int64{}
	for _, s := range steps {
		failed := int64(math.Round(s.ErrorRatio * float64(s.Attempts)))
		var noResp int64
		for r, n := range s.Errors {
			if n > 0 {
				counts[r] += n
				noResp += n
			}
		}
		httpErr := failed - noResp
		if httpErr <= 0 {
			continue
		}
		var non2xx int64
		for c, n := range s.Responses {
			if !strings.HasPrefix(c, "2") || len(c) != 3 {
				non2xx += n
			}
		}
		if non2xx != httpErr {
			counts["invalid status"] += httpErr
			continue
		}
		for c, n := range s.Responses {
			if n > 0 && (!strings.HasPrefix(c, "2") || len(c) != 3) {
				counts[c] += n
			}
		}
	}
	kinds := make([]failureKind, 0, len(counts))
	for k, n := range counts {
		kinds = append(kinds, failureKind{k, n})
	}
	slices.SortFunc(kinds, func(x, y failureKind) int {
		return cmp.Or(cmp.Compare(y.n, x.n), strings.Compare(x.name, y.name))
	})
	return kinds
}

// describeFailures lists the failure kinds of steps, as shares of attempts:
// "503 on 37% of attempts (shedding: capacity ran out), timeout on 2% (...)".
func describeFailures(steps ...Step) string {
	var attempts int64
	for _, s := range steps {
		attempts += s.Attempts
	}
	kinds := failureKinds(steps...)
	if len(kinds) == 0 || attempts == 0 {
		return "failed attempts of no recorded kind"
	}
	const most = 3
	parts := make([]string, 0, most+1)
	for i, k := range kinds {
		if i == most {
			parts = append(parts, fmt.Sprintf("%d more kinds", len(kinds)-most))
			break
		}
		of := ""
		if i == 0 {
			of = " of attempts"
		}
		parts = append(parts, fmt.Sprintf("%s on %s%s (%s)", k.name, fmtPct(float64(k.n)/float64(attempts)), of, k.meaning()))
	}
	return strings.Join(parts, ", ")
}

// topFailure names the most frequent failure kind of steps: "429: a limiter
// declining on purpose".
func topFailure(steps ...Step) string {
	kinds := failureKinds(steps...)
	if len(kinds) == 0 {
		return "failures of no recorded kind"
	}
	return kinds[0].name + ": " + kinds[0].meaning()
}

func noResponses(s Step) int64 {
	var n int64
	for _, v := range s.Errors {
		n += v
	}
	return n
}

// topReason names the most frequent reason for an attempt without a response.
func topReason(s Step) string {
	best, bn := "", int64(0)
	for _, o := range NoResponseReasons {
		if n := s.Errors[o.String()]; n > bn {
			best, bn = o.String(), n
		}
	}
	return best
}

// fmtNum formats v with about three significant digits: 398, 41, 10.2, 3.85.
func fmtNum(v float64) string {
	a := math.Abs(v)
	prec := 0
	switch {
	case a >= 100 || a == 0:
	case a >= 10:
		prec = 1
	case a >= 1:
		prec = 2
	default:
		prec = min(2-int(math.Floor(math.Log10(a))), 9)
	}
	return trimZeros(strconv.FormatFloat(v, 'f', prec, 64))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// fmtLevel formats a level as configured: 512, 2.5.
func fmtLevel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return fmtNum(v)
}

// fmtSeconds formats a duration in seconds in the unit that suits it: 41ms.
func fmtSeconds(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0s"
	case a >= 1:
		return fmtNum(s) + "s"
	case a >= 1e-3:
		return fmtNum(s*1e3) + "ms"
	case a >= 1e-6:
		return fmtNum(s*1e6) + "µs"
	}
	return fmtNum(s*1e9) + "ns"
}

// fmtPct formats a ratio as a percentage: 37%, 3.2%, 0.41%. A share below
// all does not round up to 100%.
func fmtPct(r float64) string {
	p := r * 100
	switch {
	case p >= 10:
		s := strconv.FormatFloat(p, 'f', 0, 64)
		if s == "100" && p < 100 {
			s = trimZeros(strconv.FormatFloat(math.Floor(p*10)/10, 'f', 1, 64))
		}
		return s + "%"
	case p >= 1:
		return trimZeros(strconv.FormatFloat(p, 'f', 1, 64)) + "%"
	case p > 0:
		return trimZeros(strconv.FormatFloat(p, 'f', min(1-int(math.Floor(math.Log10(p))), 9), 64)) + "%"
	}
	return "0%"
}
