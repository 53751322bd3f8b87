package prober

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
)

// settleMargin is added to the first level's p99 to decide that the target
// has worked off the last step's backlog (docs/design.md, "Settling between steps").
const settleMargin = 5 * time.Millisecond

// abandonAfter bounds how long a canceled run waits for the attempts under
// way: each ends at its deadline or on Abort, but one that does neither
// (a client bug, a syscall that does not return) must not keep SIGTERM
// from ending the process.
const abandonAfter = 2 * time.Second

// engine is the state of one run of one probe.
type engine struct {
	probe *plan.Probe
	opts  Options
	live  live.Sink
	work  workload
	// steps are the live series of a flow's steps, whose requests they
	// count: its iterations count in none. Nil for a single request.
	steps    []live.Sink
	users    []user          // closed loop: one per worker, kept across steps
	recs     []*stepRecorder // one per worker (or sender) up to recorderShards, merged at step end
	total    *stepRecorder   // the merge
	attempts atomic.Int64    // attempts so far in the run, for progress
	plan     planner
	align    alignment    // the stages' aligned starts (align.go); nil when not aligned
	fleet    *fleetSearch // a fleet's search (fleetsearch.go); nil for any other run
	started  time.Time
	// ctx ends the run. The engine asks it, never a flag set when it ends:
	// a flag set by a goroutine watching ctx lags behind it, and a step cut
	// short by the end of ctx would then be taken for a whole one.
	ctx context.Context
	// cancel ends ctx with its cause: a *result.Stop when a guard or the
	// pause switch stopped the run (stop.go).
	cancel context.CancelCauseFunc
	judge  *liveJudge // the live guards (liveguard.go); nil without any
	// level is the fleet level of the stage under way, or of the one due next
	// between stages: the level an abort names.
	level atomic.Uint64 // math.Float64bits

	mu       sync.Mutex
	finished []result.Step // the steps that ran their full length, for abandon
	stopOnce sync.Once
	stopped  time.Time // when the load stopped, once ctx has ended

	recsMu sync.Mutex // e.recs grows while the live guards read it

	// cand is the engine of the candidate a comparison measures beside
	// the probe's request (compare.go); nil without one.
	cand  *engine
	cands []result.Step // the candidate's steps so far
	// within is the candidate's settle limit, from its first step
	// (settleWithin in run).
	within time.Duration

	pool   senderPool           // open loop: the senders, kept across steps
	window time.Duration        // length of the current step's measured window
	cpu    func() time.Duration // the process's CPU time so far
}

// Run runs probe p once, step by step, and returns its result: the one
// call a Go program needs to measure a target (see the package example).
// p is a probe as config.Parse compiles it (config.Plans), or one built in
// Go from config.DefaultProbe with a name, a URL and a load and compiled
// with config.Compile. Run returns an error, having sent nothing, when its
// client cannot be built (a gRPC method that reflection cannot resolve).
// Run does not check allowed_targets, which is the config file's guard.
//
// Run never panics on a misbehaving target: every attempt ends as an
// outcome. Its result is "completed" only when every step ran its full
// length ("aborted" by abort.error_ratio or a guard). When ctx ends the
// load stops at once and the result is "canceled", with the steps that ran
// their full length, or "aborted" with the cut step too when ctx ended with
// a *result.Stop as its cause (the pause switch; docs/guards.md). Run
// returns at most abandonAfter after ctx ends, even if an attempt under way
// does not.
func Run(ctx context.Context, p *plan.Probe, opts Options) (result.Result, error) {
	started := time.Now()
	work, err := newWorkload(ctx, p, opts.Live)
	if err == nil && p.Candidate != nil {
		opts.candidate, err = newCandidate(ctx, p, opts)
	}
	var s *result.Stop
	switch {
	case err != nil && errors.As(context.Cause(ctx), &s):
		return stoppedBeforeLoad(p, s.Abort, started), nil
	case err != nil:
		return result.Result{}, fmt.Errorf("probe %q: %w", p.Name, err)
	}
	return run(ctx, p, opts, work, started), nil
}

func newResult(p *plan.Probe, started time.Time) result.Result {
	return result.Result{Name: p.Name, Mode: p.Load.Mode(), Protocol: p.Protocol(), Started: started, Steps: []result.Step{}, Diagnosis: []string{}}
}

// run runs p's workload and returns its result, bounded as Run says.
func run(ctx context.Context, p *plan.Probe, opts Options, work workload, started time.Time) result.Result {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opts.timesSeconds = opts.candidate != nil
	e := newEngine(ctx, cancel, p, opts, work, started)
	if opts.candidate != nil {
		e.cand = newEngine(ctx, cancel, candidateOf(p), candidateOptions(opts), opts.candidate, started)
	}
	go func() {
		<-ctx.Done()
		// The requests under way are cut short: the load stops at once,
		// not a timeout later.
		for _, side := range e.sides() {
			side.markStop()
			side.work.abort()
		}
	}()
	ran := make(chan result.Result, 1)
	go func() {
		defer e.close()
		ran <- e.run()
	}()
	select {
	case r := <-ran:
		return r
	case <-ctx.Done():
	}
	bound := time.NewTimer(abandonAfter)
	defer bound.Stop()
	select {
	case r := <-ran:
		return r
	case <-bound.C:
		return e.abandon()
	}
}

// newEngine is the engine of one run of p's workload, which ctx ends.
func newEngine(ctx context.Context, cancel context.CancelCauseFunc, p *plan.Probe, opts Options, work workload, started time.Time) *engine {
	e := &engine{probe: p, opts: opts, live: opts.Live, work: work, plan: newPlanner(p, opts.Shard), started: started, ctx: ctx, cancel: cancel}
	e.pool.max = p.Load.MaxInFlight
	if s := p.Load.Sessions; s > 0 {
		// WebSocket: one message at a time on each session; the replicas
		// of a fleet share the sessions as they share connections.
		e.pool.max = min(max(opts.Shard.Connections(s), 1), e.pool.max)
	}
	e.fleet = newFleetSearch(p, opts)
	if _, ok := e.plan.(fixedPlan); ok || e.fleet != nil {
		// Only a fixed plan, or a fleet's search, steps with a fleet.
		e.align = newAlignment(opts.Align, p.Load)
	}
	if e.live == nil {
		e.live = live.Nop{}
	}
	if e.cpu = opts.cpu; e.cpu == nil {
		e.cpu = processCPU
	}
	for _, name := range work.steps() {
		e.steps = append(e.steps, e.live.Step(name))
	}
	e.total = newStepRecorder(len(e.steps), e.opts.timesSeconds)
	e.judge = newLiveJudge(p.Guard, e.guardLive())
	return e
}

// run runs the stages the plan decides, one after the other, and returns
// the run's result.
func (e *engine) run() result.Result {
	p := e.probe
	r := newResult(p, e.started)
	r.Ended = result.ResultCompleted
	stopWatching, err := e.watchPrometheus()
	if err != nil {
		r.Ended, r.Error = result.ResultFailed, result.Reason(err.Error())
		return r
	}
	defer stopWatching()
	var settleWithin time.Duration
	st, more := e.plan.next(r.Steps)
	for i := 0; more; i++ {
		e.level.Store(math.Float64bits(st.fleetLevel))
		var settled time.Duration
		// A replica idle so far has no backlog of its own to wait off, nor
		// a latency to judge the target's recovery by (shard.go).
		if i > 0 && settleWithin > 0 {
			settled = e.settle(settleWithin, i)
		}
		e.waitForStart(i)
		if e.canceled() {
			e.endStopped(&r, nil)
			break
		}
		step, ran := e.measure(i, st)
		if !ran {
			e.endStopped(&r, nil) // stopped in the candidate's step
			break
		}
		step.SettleSeconds = settled.Seconds()
		if settleWithin == 0 && step.Attempts > 0 {
			settleWithin = time.Duration(step.Latency.P99*float64(time.Second)) + settleMargin
		}
		if e.canceled() {
			// Cut short: its figures cover part of its length only.
			e.endStopped(&r, &step)
			break
		}
		r.Steps = append(r.Steps, step)
		e.mu.Lock()
		e.finished = append(e.finished, step)
		e.mu.Unlock()
		done, ok := e.decideFrom(&r, i)
		if !ok {
			break
		}
		st, more = e.plan.next(done)
		// A search offers no level at or above one past abort.error_ratio
		// again, and goes on below it (search.go).
		if worst := e.worstErrorRatio(step); worst > p.Abort.ErrorRatio && more && p.Load.Search == nil {
			r.Ended = result.ResultAborted
			r.Abort = &result.Abort{By: result.ByErrorRatio, Guard: plan.GuardErrorRatio, Value: worst,
				Level: step.Level, AtSeconds: time.Since(e.started).Seconds()}
			r.Error = fmt.Sprintf("error ratio %.3g at level %g is above abort.error_ratio %.3g: no higher level ran",
				worst, step.Level, p.Abort.ErrorRatio)
			break
		}
		if e.opts.OnStep != nil && more && e.fleet == nil { // a fleet's search handed it over to read it
			e.handOver(r)
		}
	}
	recovery := e.recover(&r)
	// The next run against this host, its control first of all, must not
	// start on this ramp's backlog either (docs/design.md, "Settling between steps").
	if len(r.Steps) > 1 && r.Ended != result.ResultCanceled && mayOweBacklog(r.Steps[len(r.Steps)-1]) && !recovery.Recovered {
		e.settle(settleWithin, e.plan.most())
	}
	if stopWatching(); r.Ended == result.ResultCompleted && e.canceled() {
		e.endStopped(&r, nil) // a guard fired during the last settle
	}
	r.DurationSeconds = time.Since(e.started).Seconds()
	analysis.Analyze(&r, p.Rules)
	analysis.Recovered(&r, recovery)
	e.readTelemetry(&r)
	e.judgeCandidate(&r)
	e.joinFleet(&r)
	return r
}

// abandon is the result of a canceled run whose attempts under way did not
// end within abandonAfter: they are left to end on their own.
func (e *engine) abandon() result.Result {
	r := newResult(e.probe, e.started)
	e.mu.Lock()
	r.Steps = append(r.Steps, e.finished...)
	e.mu.Unlock()
	e.endStopped(&r, nil)
	r.Error = fmt.Sprintf("attempts under way did not end within %s of the cancel: left behind", abandonAfter)
	r.DurationSeconds = time.Since(e.started).Seconds()
	analysis.Analyze(&r, e.probe.Rules)
	return r
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// canceled reports whether the run's context has ended.
func (e *engine) canceled() bool { return e.ctx.Err() != nil }

func (e *engine) close() {
	for _, side := range e.sides() {
		side.closeSenders()
		for _, u := range side.users {
			u.close()
		}
		side.work.close()
	}
}

// runStage holds one stage for its duration and summarizes it.
func (e *engine) runStage(i int, st stage) result.Step {
	closedLoop := e.probe.Load.Mode().ClosedLoop()
	if !closedLoop {
		e.loops(st) // before the clock starts: over TLS they take handshakes
	}
	start := time.Now()
	measureFrom := start
	if !st.recovery {
		measureFrom = start.Add(time.Duration(e.probe.Load.Warmup))
	}
	end := start.Add(st.duration)
	done := make(chan struct{})
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		e.report(i, st, start, done)
	}()
	judged := make(chan struct{})
	go func() {
		defer close(judged)
		if e.judge != nil {
			e.judgeWindows(start, done)
		}
	}()
	var dropped int64
	cpu := startCPUWatch(e.cpu)
	if closedLoop {
		dropped = e.closedLoop(int(st.level), measureFrom, end)
	} else {
		dropped = e.openLoop(st, start, measureFrom, end)
	}
	cpuRatio := cpu.ratio()
	close(done)
	<-judged   // the next step's windows are its own
	<-reported // no step's progress prints after the next step's, or the next probe's
	if e.canceled() {
		if at := e.markStop(); at.Before(end) {
			// Cut short: its figures end where its load did (in its
			// warmup: it measured nothing).
			end = latest(at, measureFrom)
		}
	}
	e.total.reset()
	for _, rec := range e.recs {
		e.total.merge(rec)
	}
	// A phase that ramps offers its mean rate over the phase.
	step := e.total.summarize((st.level+st.rampTo)/2, st.name, end.Sub(measureFrom), closedLoop)
	step.Dropped = dropped
	step.Level = st.fleetLevel
	step.Started = start
	step.Search = st.search
	step.GeneratorCPURatio = cpuRatio
	step.Flow = e.total.flowFigures(e.work.steps(), end.Sub(measureFrom))
	step.ScriptError = e.work.scriptError()
	if e.opts.Overlapping != nil {
		step.OverlappingRuns = e.opts.Overlapping(start)
	}
	return step
}

// closedLoop runs level workers, each sending its next request on its own
// connection as soon as the last one ends, until end, or streaming on its
// own schedule (stream.go). Requests under way at end are finished
// (bounded by the timeout), not cancelled, so every attempt has an
// outcome; an attempt counts in the step when it started after
// measureFrom. It returns the streams' messages dropped in the measured
// window.
func (e *engine) closedLoop(level int, measureFrom, end time.Time) (dropped int64) {
	for len(e.users) < level {
		e.users = append(e.users, e.work.newUser())
	}
	e.useRecorders(level, end.Sub(measureFrom))
	timeout := time.Duration(e.probe.Request.Timeout)
	e.live.Concurrency(level)
	defer e.live.Concurrency(0)
	if level == 0 {
		e.idle(end) // a shard's share of a level below the replica count
		return 0
	}
	var wg sync.WaitGroup
	var drops atomic.Int64
	wg.Add(level)
	for w := 0; w < level; w++ {
		go func(u user, rec *stepRecorder) {
			defer wg.Done()
			if s, ok := u.(streamer); ok {
				e.stream(s, rec, measureFrom, end, &drops)
				return
			}
			steps := e.stepObserver(rec, measureFrom)
			now := time.Now()
			for now.Before(end) && !e.canceled() {
				e.live.InFlight(1)
				deadline := now.Add(timeout)
				code, o, think := u.do(deadline, steps)
				finished := time.Now()
				if e.steps == nil && o.Responded() && !finished.Before(deadline) {
					// An answer handed over at or past the deadline is
					// late, however late the worker woke to read it: no
					// success measures longer than the timeout
					// (docs/configuration.md, "probes[].request").
					code, o = result.Code{}, result.Timeout
				}
				e.live.InFlight(-1)
				e.observe(rec, o, code, now, finished, measureFrom, think, heldWithin(now, finished, measureFrom, end))
				now = finished
			}
		}(e.users[w], e.recorder(w))
	}
	wg.Wait()
	return drops.Load()
}
