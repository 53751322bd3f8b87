package prober

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loadprobe/loadprobe/config"
)

// Observer is told about runs as the scheduler starts and ends them; the
// collector implements it.
type Observer interface {
	Live(probe string) Live
	RunStarted(probe string)
	RunEnded(probe, result string)
	// Waited records how long a run waited for its host or the caps.
	Waited(probe string, seconds float64)
	Forget(probe string)
}

// ProbeState is what the daemon knows of one configured probe.
type ProbeState struct {
	Probe         config.Probe
	Last          *Result   // latest finished run, nil before the first
	Current       *Result   // run under way with the steps finished so far, nil when idle
	LastCompleted time.Time // end of the last completed run; zero: never
}

// ErrUnknownProbe is returned by Trigger for a name the config lacks.
var ErrUnknownProbe = errors.New("no such probe")

// Scheduler runs every configured probe on its schedule, one run at a time
// per probe, never two probes against one host at once, and within the
// config's caps on total concurrency and rate.
type Scheduler struct {
	obs    Observer
	logger *slog.Logger
	store  *Store // nil: results are not kept across restarts

	ctx  context.Context
	wg   sync.WaitGroup
	mu   sync.Mutex
	cfg  *config.Config
	runs map[string]*probeLoop
	// kept holds results read back from the store for probes not yet
	// started, so a restart serves the last breaking points at once.
	kept map[string]ProbeState

	busyHosts map[string]bool
	usedConc  int
	usedRate  float64
	freed     chan struct{} // closed and replaced whenever a run frees its host and share of the caps
	queue     []*waiter     // runs waiting in acquire, in the order they came
}

// probeLoop is the goroutine that schedules one probe.
type probeLoop struct {
	probe   config.Probe
	cancel  context.CancelFunc
	trigger chan struct{}
	done    chan struct{}
	state   ProbeState // guarded by Scheduler.mu
}

// NewScheduler returns a scheduler whose runs stop when ctx ends. With a
// store, it starts from the results the store holds.
func NewScheduler(ctx context.Context, obs Observer, store *Store, logger *slog.Logger) (*Scheduler, error) {
	s := &Scheduler{
		obs: obs, logger: logger, store: store, ctx: ctx,
		runs: map[string]*probeLoop{}, kept: map[string]ProbeState{},
		busyHosts: map[string]bool{}, freed: make(chan struct{}),
	}
	if store != nil {
		states, err := store.Load()
		if err != nil {
			return nil, err
		}
		for _, st := range states {
			s.kept[st.Probe.Name] = st
		}
	}
	return s, nil
}

// Apply schedules the probes of cfg: a new probe starts now, an unchanged
// one goes on untouched, a changed or removed one has its run canceled
// (the changed one then starts over with its new config).
func (s *Scheduler) Apply(cfg *config.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = cfg
	wanted := map[string]config.Probe{}
	for _, p := range cfg.Probes {
		wanted[p.Name] = p
	}
	var stopped []*probeLoop
	for name, l := range s.runs {
		if p, ok := wanted[name]; !ok || !reflect.DeepEqual(p, l.probe) {
			l.cancel()
			stopped = append(stopped, l)
			delete(s.runs, name)
			s.kept[name] = l.state
			if !ok {
				delete(s.kept, name)
				s.obs.Forget(name)
			}
		}
	}
	for _, p := range cfg.Probes {
		if _, ok := s.runs[p.Name]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		l := &probeLoop{probe: p, cancel: cancel, trigger: make(chan struct{}, 1), done: make(chan struct{})}
		l.state = s.kept[p.Name]
		l.state.Probe = p
		delete(s.kept, p.Name)
		s.runs[p.Name] = l
		prev := stopped
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer close(l.done)
			// A replaced probe's old run must end before the new one can
			// take the host.
			for _, old := range prev {
				if old.probe.Name == p.Name {
					<-old.done
				}
			}
			s.loop(ctx, l)
		}()
	}
}

// Wait returns when every probe's loop has ended, after ctx ends.
func (s *Scheduler) Wait() { s.wg.Wait() }

// Trigger starts a run of the named probe now (or right after the one under way).
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
func (s *Scheduler) Snapshot() []ProbeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg == nil {
		return nil
	}
	states := make([]ProbeState, 0, len(s.cfg.Probes))
	for _, p := range s.cfg.Probes {
		if l, ok := s.runs[p.Name]; ok {
			states = append(states, l.state)
		}
	}
	return states
}

// Results returns the latest run of every probe and the runs under way.
func (s *Scheduler) Results() []Result {
	var rs []Result
	for _, st := range s.Snapshot() {
		if st.Last != nil {
			rs = append(rs, *st.Last)
		}
		if st.Current != nil {
			rs = append(rs, *st.Current)
		}
	}
	if rs == nil {
		rs = []Result{}
	}
	return rs
}

// loop runs its probe at start and then every interval (plus jitter),
// back to back when continuous, or when triggered, until ctx ends.
func (s *Scheduler) loop(ctx context.Context, l *probeLoop) {
	sched := l.probe.Schedule
	next := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-l.trigger:
		}
		started := time.Now()
		s.runOnce(ctx, l)
		if sched.Continuous {
			next = time.Now()
			continue
		}
		next = started.Add(time.Duration(sched.Interval))
		if j := time.Duration(sched.Jitter); j > 0 {
			next = next.Add(rand.N(j))
		}
	}
}

// runOnce waits for the probe's host and share of the caps, runs it and its
// control, and keeps the result.
func (s *Scheduler) runOnce(ctx context.Context, l *probeLoop) {
	p := l.probe
	waitStart := time.Now()
	if !s.acquire(ctx, p) {
		return
	}
	defer s.release(p)
	s.obs.Waited(p.Name, time.Since(waitStart).Seconds())

	s.obs.RunStarted(p.Name)
	s.setCurrent(l, &Result{Name: p.Name, Mode: p.Load.Mode(), Result: ResultRunning, Started: time.Now(), Steps: []Step{}, Diagnosis: []string{}})
	r := Run(ctx, p, Options{Live: s.obs.Live(p.Name), OnStep: func(partial Result) { s.setCurrent(l, &partial) }})
	if c, ok := s.control(p); ok && r.Result != ResultFailed && r.Result != ResultCanceled {
		// The control runs under this probe's host reservation: it is the
		// same generator against the same server.
		s.obs.RunStarted(c.Name)
		cr := Run(ctx, c, Options{Live: s.obs.Live(c.Name)})
		s.obs.RunEnded(c.Name, cr.Result)
		if cr.Result == ResultCanceled {
			r.Result = ResultCanceled
		}
		MarkControl(&r, cr)
	}
	s.obs.RunEnded(p.Name, r.Result)

	s.mu.Lock()
	l.state.Current = nil
	l.state.Last = &r
	if r.Result == ResultCompleted {
		l.state.LastCompleted = r.Started.Add(time.Duration(r.DurationSeconds * float64(time.Second)))
	}
	s.mu.Unlock()
	if s.store != nil {
		if err := s.store.Save(s.Snapshot()); err != nil {
			s.logger.Error("Cannot keep the results", "err", err)
		}
	}
	s.logger.Info("Run ended", "probe", p.Name, "result", r.Result, "duration", time.Duration(r.DurationSeconds*float64(time.Second)).Round(time.Millisecond))
}

func (s *Scheduler) setCurrent(l *probeLoop, r *Result) {
	s.mu.Lock()
	l.state.Current = r
	s.mu.Unlock()
}

// control returns the probe's control probe from the config in force.
func (s *Scheduler) control(p config.Probe) (config.Probe, bool) {
	if p.Control == "" {
		return config.Probe{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Probe(p.Control)
}

// demand is what a run of p holds while it runs: its host and its highest
// level against the caps.
func demand(p config.Probe) (host string, conc int, rate float64) {
	if u, err := url.Parse(p.Request.URL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	for _, st := range plan(p.Load) {
		if p.Load.Mode() == config.ModeConcurrency {
			conc = max(conc, int(st.level))
		} else {
			rate = max(rate, st.level, st.rampTo)
		}
	}
	return host, conc, rate
}

// acquire waits until p's host is free and its load fits under the caps,
// then reserves both. Waiters for one host go in the order they came, so a
// continuous probe that asks again the moment its run ends cannot starve a
// ramp against the same host. It returns false when ctx ends first.
func (s *Scheduler) acquire(ctx context.Context, p config.Probe) bool {
	host, conc, rate := demand(p)
	me := &waiter{host: host}
	s.mu.Lock()
	s.queue = append(s.queue, me)
	s.mu.Unlock()
	for {
		s.mu.Lock()
		fits := !s.busyHosts[host] && s.first(me) &&
			s.usedConc+conc <= s.cfg.MaxConcurrency && s.usedRate+rate <= s.cfg.MaxRate
		if fits {
			s.busyHosts[host] = true
			s.usedConc += conc
			s.usedRate += rate
			s.leave(me)
			s.mu.Unlock()
			return true
		}
		freed := s.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			s.mu.Lock()
			s.leave(me)
			s.wake()
			s.mu.Unlock()
			return false
		}
	}
}

// waiter is a run waiting in acquire.
type waiter struct{ host string }

// first reports whether no earlier waiter wants w's host. Callers hold s.mu.
func (s *Scheduler) first(w *waiter) bool {
	for _, q := range s.queue {
		if q == w {
			return true
		}
		if q.host == w.host {
			return false
		}
	}
	return true
}

// leave takes w out of the queue. Callers hold s.mu.
func (s *Scheduler) leave(w *waiter) {
	s.queue = slices.DeleteFunc(s.queue, func(q *waiter) bool { return q == w })
}

// wake tells every waiter to look again. Callers hold s.mu.
func (s *Scheduler) wake() {
	close(s.freed)
	s.freed = make(chan struct{})
}

func (s *Scheduler) release(p config.Probe) {
	host, conc, rate := demand(p)
	s.mu.Lock()
	delete(s.busyHosts, host)
	s.usedConc -= conc
	s.usedRate -= rate
	s.wake()
	s.mu.Unlock()
}
