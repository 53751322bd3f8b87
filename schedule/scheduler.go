package schedule

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// Observer is told about runs as the scheduler starts and ends them; the
// collector implements it.
type Observer interface {
	Live(probe string) live.Sink
	RunStarted(probe string)
	RunEnded(probe string, r result.RunResult)
	// Waited records how long a run waited for its host or the caps.
	Waited(probe string, seconds float64)
	// Forget is called once a removed probe's last run has ended: nothing
	// is reported about the probe after it (unless it is configured again).
	Forget(probe string)
}

// ErrUnknownProbe is returned by Trigger for a name the config lacks.
var ErrUnknownProbe = errors.New("no such probe")

// failedRetry is how long a continuous probe whose run failed (its client
// could not even be built) waits before it tries again, instead of spinning.
const failedRetry = 5 * time.Second

// resolveTimeout bounds the name lookup that tells which probes share a host.
const resolveTimeout = 2 * time.Second

// Scheduler runs every configured probe on its schedule, one run at a time
// per probe, never two probes against one host at once, and within the
// config's caps on total concurrency and rate.
//
// Two targets are one host when their host names are equal or resolve to a
// common address: 127.0.0.1 and localhost are one host, and so are two
// names of one server. Ports do not matter: two services on one machine
// share its CPU, and one's load would corrupt the other's figures.
type Scheduler struct {
	run    prober.Runner
	obs    Observer
	logger *slog.Logger
	store  *Store            // nil: results are not kept across restarts
	shard  fleet.Shard       // this replica's part of a fleet
	fleet  *fleet.Prometheus // nil: runs do not watch their peers' guards
	judge  FleetJudge        // nil: runs are not judged as a fleet's (fleet.go)
	steps  prober.FleetSteps // nil: a fleet's replica cannot search

	// lookup resolves a host name to its addresses; tests replace it.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)

	ctx    context.Context
	wg     sync.WaitGroup
	saveMu sync.Mutex // one Save at a time, each of the latest snapshot
	// saveFailures counts the saves that failed (SaveFailures).
	saveFailures atomic.Uint64

	mu   sync.Mutex
	cfg  *config.Config
	runs map[string]*probeLoop
	// stopping holds, by name, the canceled loops that have not ended yet:
	// a probe's new loop starts only after its old one has ended.
	stopping map[string]*probeLoop
	// kept holds the states of probes not running yet: read back from the
	// store, or carried over from a probe's loop that a reload replaced.
	kept map[string]state.Probe

	busy     map[string]*claim // host keys of the runs under way, and the run holding each
	usedConc int
	usedRate float64
	freed    chan struct{} // closed and replaced whenever the waiters must look again
	queue    []*claim      // runs waiting in acquire, in the order they came
	active   []*claim      // the runs under way (parallel.go)
	recent   []*claim      // those and the ended runs that may overlap one of their steps

	paused  bool          // the pause switch (pause.go)
	resumed chan struct{} // closed by Resume
}

// probeLoop is the goroutine that schedules one probe.
type probeLoop struct {
	probe   *plan.Probe
	cancel  context.CancelFunc
	trigger chan struct{}
	done    chan struct{}
	state   state.Probe // guarded by Scheduler.mu
	// stopRun ends the run under way (or waiting for its host) with a
	// cause; nil between runs. Guarded by Scheduler.mu.
	stopRun context.CancelCauseFunc
	// waitingOn is the claim of the run waiting in acquire, nil when
	// none waits: Snapshot says what it waits for. Guarded by Scheduler.mu.
	waitingOn *claim
	// due is when the run under way was due: the boundary it aligns to
	// on a fleet's replica (align.go). The loop's goroutine alone uses it.
	due time.Time
	// tally sums up a continuous probe's runs for its summary line
	// (runlog.go). The loop's goroutine alone uses it.
	tally runTally
	// Probes that start together queue in the order of the file (see
	// queueInTurn): the first run waits for the loop before it to queue
	// (after), and queued closes once this loop's first run has queued,
	// or the loop has ended. Both nil outside such a start; the loop's
	// goroutine alone uses them.
	after  <-chan struct{}
	queued chan struct{}
}

// Options are what a Scheduler is built with.
type Options struct {
	// Run runs each probe: prober.Run sends the load.
	Run      prober.Runner
	Observer Observer
	// Store keeps the latest results across restarts; nil keeps none.
	Store  *Store
	Logger *slog.Logger // nil: nothing is logged
	// Shard makes every run, controls included, send the shard's share
	// of each level (docs/fleet.md); zero: a lone loadprobe.
	Shard fleet.Shard
	// FleetJudge, when set, judges every finished run (completed or
	// aborted) of a scheduled probe as part of its fleet's, once the run
	// is kept: the fleet's figures join the run's result when they are
	// read. A continuous probe's runs are not judged: each replaces the
	// last one's step series within seconds, before a scrape can be
	// counted on to see them, and a fixed canary load has no breaking
	// points to find. The daemon sets it on the replica with ordinal 0.
	FleetJudge FleetJudge
	// Fleet, when set, is the Prometheus where every run of a replica
	// watches its peers' guards (docs/fleet.md, "Fleet guards").
	Fleet *fleet.Prometheus
	// FleetSteps, when set, reads the fleet's steps for a search that
	// every replica runs together (docs/fleet.md, "Fleet search").
	FleetSteps prober.FleetSteps
}

// New returns a scheduler whose runs stop when ctx ends. With a store, it
// starts from the results the store holds.
func New(ctx context.Context, o Options) (*Scheduler, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	store := o.Store
	s := &Scheduler{
		run: o.Run, obs: o.Observer, logger: logger, store: store, ctx: ctx,
		shard: o.Shard, judge: o.FleetJudge, fleet: o.Fleet, steps: o.FleetSteps,
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		runs: map[string]*probeLoop{}, stopping: map[string]*probeLoop{}, kept: map[string]state.Probe{},
		busy: map[string]*claim{}, freed: make(chan struct{}),
	}
	if store != nil {
		states, err := store.Load()
		if err != nil {
			// A file that cannot be read is kept for a person to look at,
			// not overwritten by the next run, and does not stop the
			// daemon: a crash loop over a cache would probe nothing. On
			// read-only storage it cannot even be moved: it is ignored
			// (and every save fails, logged, as it must there).
			if aside, moveErr := store.setAside(); moveErr != nil {
				s.logger.Error("Cannot read the kept results, nor set the file aside: starting without them", "err", err, "set_aside_err", moveErr)
			} else {
				s.logger.Error("Cannot read the kept results: starting without them", "err", err, "kept_as", aside)
			}
		}
		for _, st := range states {
			s.kept[st.Probe.Name] = st
		}
		if store.Paused() {
			s.Pause()
		}
	}
	return s, nil
}

// Apply schedules the probes of cfg: a new probe starts now, an unchanged
// one goes on untouched, a changed or removed one has its run canceled
// (the changed one then starts over with its new config, once its old run
// has ended). A removed probe is forgotten once its last run has ended.
func (s *Scheduler) Apply(cfg *config.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = cfg
	if s.ctx.Err() != nil {
		return // stopped: no new loops while Wait may be waiting
	}
	wanted := map[string]*plan.Probe{}
	for _, p := range cfg.Plans() {
		wanted[p.Name] = p
	}
	for name, l := range s.runs {
		p, ok := wanted[name]
		if ok && p.Same(l.probe) {
			continue
		}
		l.cancel()
		delete(s.runs, name)
		s.stopping[name] = l
		if ok {
			// The new config starts from the old one's results; its
			// canceled run is no result.
			st := l.state
			st.Current, st.Waiting, st.Next = nil, false, time.Time{}
			s.kept[name] = st
		} else {
			delete(s.kept, name)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			<-l.done
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.stopping[name] == l {
				delete(s.stopping, name)
			}
			if _, back := s.runs[name]; !back {
				s.obs.Forget(name)
			}
		}()
	}
	var before <-chan struct{}
	for _, p := range cfg.Plans() {
		if _, ok := s.runs[p.Name]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		l := &probeLoop{probe: p, cancel: cancel, trigger: make(chan struct{}, 1), done: make(chan struct{})}
		l.state = s.kept[p.Name]
		l.state.Probe = p
		delete(s.kept, p.Name)
		s.runs[p.Name] = l
		prev := s.stopping[p.Name]
		if prev == nil && !s.aligned() {
			l.after, l.queued = before, make(chan struct{})
			before = l.queued
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer close(l.done)
			defer l.markQueued()
			// A replaced probe's old run must end before the new one can
			// start: one run at a time per probe, and its Observer calls
			// must not interleave with the new run's.
			if prev != nil {
				<-prev.done
			}
			s.loop(ctx, l)
		}()
	}
}

// Wait returns when every probe's loop has ended, after ctx ends.
func (s *Scheduler) Wait() { s.wg.Wait() }

// Trigger starts a run of the named probe now (or right after the one under
// way; triggers during a run add up to one run).
func (s *Scheduler) Trigger(name string) error {
	s.mu.Lock()
	l, ok := s.runs[name]
	s.mu.Unlock()
	if !ok {
		return ErrUnknownProbe
	}
	select {
	case l.trigger <- struct{}{}:
	default: // one is pending already
	}
	return nil
}

// Snapshot returns every configured probe's state, in config order.
func (s *Scheduler) Snapshot() []state.Probe {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg == nil {
		return nil
	}
	states := make([]state.Probe, 0, len(s.cfg.Probes))
	for _, p := range s.cfg.Probes {
		if l, ok := s.runs[p.Name]; ok {
			st := l.state
			if l.waitingOn != nil && slices.Contains(s.queue, l.waitingOn) {
				st.WaitingFor = s.blocker(l.waitingOn)
			}
			states = append(states, st)
		}
	}
	return states
}

// Results returns the latest run of every probe and the runs under way.
func (s *Scheduler) Results() []result.Result {
	rs := []result.Result{}
	for _, st := range s.Snapshot() {
		if st.Last != nil {
			rs = append(rs, *st.Last)
		}
		if st.Current != nil {
			rs = append(rs, *st.Current)
		}
	}
	return rs
}

// loop runs its probe at start and then every interval (plus jitter),
// back to back when continuous, or when triggered, until ctx ends.
func (s *Scheduler) loop(ctx context.Context, l *probeLoop) {
	sched := l.probe.Schedule
	next := s.firstRun(l.probe, time.Now())
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			l.due = next
		case <-l.trigger:
			l.due = s.triggeredRun(time.Now())
		}
		if ctx.Err() != nil {
			return
		}
		rctx, ok := s.unpaused(ctx, l) // held while paused; the switch ends rctx
		if !ok {
			return
		}
		started := time.Now()
		outcome := s.runOnce(ctx, rctx, l)
		next = s.nextRun(l.probe, started, time.Now(), outcome)
		if cutByPause(rctx) {
			next = s.triggeredRun(time.Now()) // run again once resumed
		}
		s.runEnded(l)
		if !sched.Continuous || outcome == result.ResultFailed {
			s.mu.Lock()
			l.state.Next = next
			s.mu.Unlock()
		}
		timer.Reset(time.Until(next))
	}
}

// runOnce waits for the probe's host and share of the caps, runs it and its
// control, and keeps the result. It returns the run's result. rctx is the
// run's context, which the pause switch ends; the fleet's judge of the run
// outlives it, until ctx ends.
func (s *Scheduler) runOnce(ctx, rctx context.Context, l *probeLoop) result.RunResult {
	p := l.probe
	s.mu.Lock()
	l.state.Waiting, l.state.Next = true, time.Time{}
	s.mu.Unlock()
	control, hasControl := s.control(p)
	c := s.claimFor(rctx, p, control, hasControl)
	waitStart := time.Now()
	s.queueInTurn(rctx, l, c)
	ok := s.acquire(rctx, c)
	s.obs.Waited(p.Name, time.Since(waitStart).Seconds())
	s.mu.Lock()
	l.state.Waiting, l.waitingOn = false, nil
	s.mu.Unlock()
	if !ok {
		return result.ResultCanceled
	}
	defer s.release(c)

	var ctl *plan.Probe
	if hasControl {
		ctl = control
	}
	r := s.runWithControl(rctx, l, ctl, func(since time.Time) int { return s.overlapping(c, since) })

	// As at the start: the state first, then the Observer.
	s.mu.Lock()
	l.state.Current, l.state.Doing = nil, ""
	if r.Ended != result.ResultCanceled {
		// A canceled run (reload, shutdown) says nothing about the
		// target: the last finished run stays the result.
		l.state.Last = &r
		if keepsHistory(l) {
			l.state.History = withRun(l.state.History, r)
			l.state.Change = capacityChange(l.state.History)
		}
		if r.Ended == result.ResultCompleted {
			l.state.LastCompleted = r.Started.Add(time.Duration(r.DurationSeconds * float64(time.Second)))
		}
	}
	s.mu.Unlock()
	s.obs.RunEnded(p.Name, r.Ended)
	if r.Ended != result.ResultCanceled {
		s.save()
	}
	s.judgeFleet(ctx, l, r)
	s.logRun(l, r, time.Now())
	return r.Ended
}

// runWithControl runs l's probe and its control (nil: none) with the
// scheduler's runner, keeping the run under way in l's state as it goes.
func (s *Scheduler) runWithControl(ctx context.Context, l *probeLoop, control *plan.Probe, overlapping func(time.Time) int) result.Result {
	p := l.probe
	// Every view of this run carries one start time: the scheduler's.
	started := time.Now()
	restamp := func(r *result.Result) {
		r.DurationSeconds += r.Started.Sub(started).Seconds()
		r.Started = started
	}
	// The run is in the state before the Observer hears of it: whoever
	// sees loadprobe_running at 1 finds the run in /api/v1/results.
	s.setCurrent(l, &result.Result{Name: p.Name, Mode: p.Load.Mode(), Protocol: p.Protocol(), Ended: result.ResultRunning, Started: started, Steps: []result.Step{}, Diagnosis: []string{}})
	s.obs.RunStarted(p.Name)
	align := s.alignAt(l)
	opts := prober.Options{Live: s.obs.Live(p.Name), Shard: s.shard, Fleet: s.fleet, FleetSteps: s.steps, Align: align, Overlapping: overlapping, OnStep: func(partial result.Result) {
		restamp(&partial)
		s.setCurrent(l, &partial)
	}, Progress: func(pr prober.Progress) { s.setDoing(l, pr.Search) }}
	var ctl *prober.Control
	if control != nil {
		// The control runs under this probe's reservation, which covers
		// its host and its load too: it is the same generator against
		// the same server, right after the probe.
		ctl = &prober.Control{
			Probe:   control,
			Options: prober.Options{Live: s.obs.Live(control.Name), Shard: s.shard, Fleet: s.fleet, Align: fleet.ControlStart(align, p.Load), Overlapping: overlapping},
			Started: func(shown result.Result) {
				restamp(&shown)
				shown.Ended = result.ResultRunning
				s.setCurrent(l, &shown)
				s.setDoing(l, "") // the control runs a fixed ramp
				s.obs.RunStarted(control.Name)
			},
			Ended: func(cr result.Result) { s.obs.RunEnded(control.Name, cr.Ended) },
		}
	}
	r := s.run.WithControl(ctx, p, opts, ctl)
	restamp(&r)
	return r
}

// save writes the latest results to the store. Saves are serialized and
// each takes its snapshot under the lock, so a slower save of an older
// snapshot can never replace a newer one.
func (s *Scheduler) save() {
	if s.store == nil {
		return
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if err := s.store.Save(s.Snapshot()); err != nil {
		s.saveFailures.Add(1)
		s.logger.Error("Cannot keep the results", "err", err)
	}
}

// SaveFailures is how many saves of the results failed since the start:
// loadprobe_storage_save_failures_total.
func (s *Scheduler) SaveFailures() uint64 { return s.saveFailures.Load() }

func (s *Scheduler) setCurrent(l *probeLoop, r *result.Result) {
	s.mu.Lock()
	l.state.Current = r
	s.mu.Unlock()
}

// setDoing keeps what a search's step under way is for, for the status page.
func (s *Scheduler) setDoing(l *probeLoop, doing string) {
	s.mu.Lock()
	l.state.Doing = doing
	s.mu.Unlock()
}

// control returns the probe's control probe from the config in force.
func (s *Scheduler) control(p *plan.Probe) (*plan.Probe, bool) {
	if p.Control == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Plan(p.Control)
}
