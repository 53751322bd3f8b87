package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/schedule"
)

// shutdownTimeout bounds how long in-flight HTTP requests may take once the
// daemon is told to stop; then their connections are closed.
const shutdownTimeout = 2 * time.Second

// Options configure a Daemon.
type Options struct {
	ConfigFile      string
	Web             *web.FlagConfig // listen addresses and --web.config.file
	EnableLifecycle bool            // POST /-/reload and POST /api/v1/probes/NAME/run
	StoragePath     string          // where the latest results are kept across restarts; "" keeps none
	Paused          bool            // --paused: start with the pause switch on
	Shard           fleet.Shard     // this replica's part of a fleet (--shard); zero: a lone loadprobe
	Fleet           FleetOptions    // where replica 0 reads the fleet's runs back (--fleet.*)
	Logger          *slog.Logger
	// Hup delivers reload requests; nil means the process's SIGHUP.
	Hup <-chan os.Signal
}

// Daemon is loadprobe's long-running server: it holds the config, the
// registry, the collector and the scheduler, and serves them over HTTP.
type Daemon struct {
	opts    Options
	logger  *slog.Logger
	reg     *prometheus.Registry
	sc      *config.SafeConfig
	coll    *collector.Collector
	sched   *schedule.Scheduler
	stop    context.CancelFunc // ends every run
	handler http.Handler

	reloadMu sync.Mutex
	ready    atomic.Bool

	started chan struct{} // closed once the config is loaded and the listeners are bound
	addrs   []net.Addr
}

// New builds a daemon with its own registry (never the global one,
// which imported libraries write to).
func New(o Options) (*Daemon, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{
		opts:    o,
		logger:  o.Logger,
		reg:     prometheus.NewRegistry(),
		started: make(chan struct{}),
	}
	d.reg.MustRegister(
		versioncollector.NewCollector("loadprobe"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	d.sc = config.NewSafeConfig(d.reg)
	d.sc.Shard, d.sc.ReadsFleet = o.Shard, o.Fleet.PrometheusURL != ""
	var store *schedule.Store
	if o.StoragePath != "" {
		var err error
		if store, err = schedule.NewStore(o.StoragePath); err != nil {
			return nil, err
		}
	}
	prom, err := o.Fleet.Prometheus()
	if err != nil {
		return nil, err
	}
	// The live families first: the collector is the scheduler's Observer.
	// The families of the results are the scheduler's, read at scrape time.
	d.coll = collector.New(d.reg)
	// Runs outlive no daemon: Run ends them when its context ends.
	ctx, stop := context.WithCancel(context.Background())
	d.stop = stop
	so := schedule.Options{Run: prober.Run, Observer: d.coll, Store: store, Logger: o.Logger, Shard: o.Shard}
	if err = d.withFleet(&so, prom); err == nil {
		d.sched, err = schedule.New(ctx, so)
	}
	if err != nil {
		stop()
		return nil, err
	}
	if o.Paused {
		d.sched.Pause()
	}
	collector.RegisterResults(d.reg, d.sched)
	collector.RegisterPaused(d.reg, d.sched.Paused)
	collector.RegisterStorage(d.reg, d.sched.SaveFailures)
	collector.RegisterShard(d.reg, o.Shard, func() string { return d.sc.Get().Hash() })
	collector.RegisterFleet(d.reg, d.sched, o.Shard)
	d.handler = d.routes()
	return d, nil
}

// Started is closed once the config is loaded and the listeners are bound.
func (d *Daemon) Started() <-chan struct{} { return d.started }

// Addrs are the addresses the daemon listens on, valid once Started is closed
// (empty with systemd socket activation and vsock, whose listeners
// exporter-toolkit opens itself).
func (d *Daemon) Addrs() []net.Addr { return d.addrs }

// Run loads the config, serves HTTP until ctx is done, reloads on every value
// of the Hup channel and shuts the server down cleanly. It returns an error
// when the config does not load or the server cannot start.
func (d *Daemon) Run(ctx context.Context) error {
	// Catch SIGHUP before anything else: its default action ends the process.
	hup := d.opts.Hup
	if hup == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGHUP)
		defer signal.Stop(ch)
		hup = ch
	}
	defer d.stopRuns()
	if err := d.sc.ReloadConfig(d.opts.ConfigFile, d.logger); err != nil {
		return fmt.Errorf("loading config: %w", err)
	}
	d.apply()
	d.ready.Store(true)

	limit := newConnLimit()
	srv := newServer(d.handler, limit, slog.NewLogLogger(d.logger.Handler(), slog.LevelError))
	listeners, err := d.listen()
	if err != nil {
		return err
	}
	for i, l := range listeners {
		listeners[i] = limit.listener(l)
	}
	serveErr := make(chan error, 1)
	go func() {
		if listeners == nil {
			serveErr <- web.ListenAndServe(srv, d.opts.Web, d.logger)
		} else {
			serveErr <- web.ServeMultiple(listeners, srv, d.opts.Web, d.logger)
		}
	}()
	close(d.started)

	// Reloads run beside this loop, one at a time, so that a SIGTERM
	// during one (a config with large data files takes seconds to read)
	// stops the daemon at once: Run returns, and the reload's result, if it
	// ends before the process, applies to a stopped scheduler, which starts
	// nothing. SIGHUPs during a reload add up to one more.
	reloads := make(chan struct{}, 1)
	defer close(reloads)
	go func() {
		for range reloads {
			_ = d.reload() // logged, and the gauge says it
		}
	}()
	for {
		select {
		case <-hup:
			select {
			case reloads <- struct{}{}:
			default: // one is pending already
			}
		case err := <-serveErr:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case <-ctx.Done():
			d.logger.Info("Shutting down")
			// Load stops first: every run returns, canceled, at most
			// 2s after the cancel (prober.Run's bound), so SIGTERM ends
			// the daemon within a few seconds.
			d.stopRuns()
			sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				d.logger.Warn("Closing HTTP connections still busy at shutdown", "err", err)
				srv.Close()
			}
			if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	}
}

// listen binds the TCP listen addresses itself, so that their bound
// addresses are known (a test listens on 127.0.0.1:0). It returns nil
// listeners when exporter-toolkit must open them: systemd socket activation
// or a vsock:// address.
func (d *Daemon) listen() ([]net.Listener, error) {
	f := d.opts.Web
	if f == nil || f.WebListenAddresses == nil || f.WebConfigFile == nil {
		return nil, errors.New("no web listen configuration")
	}
	if f.WebSystemdSocket != nil && *f.WebSystemdSocket {
		return nil, nil
	}
	for _, a := range *f.WebListenAddresses {
		if strings.HasPrefix(a, "vsock://") {
			return nil, nil
		}
	}
	if len(*f.WebListenAddresses) == 0 {
		return nil, web.ErrNoListeners
	}
	var ls []net.Listener
	for _, a := range *f.WebListenAddresses {
		l, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, err
		}
		ls = append(ls, l)
		d.addrs = append(d.addrs, l.Addr())
	}
	return ls, nil
}

// reload reads the config file again. On failure the old config stays in
// force and the reload gauge says so; on success the live series and results
// of removed probes are dropped.
func (d *Daemon) reload() error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if err := d.sc.ReloadConfig(d.opts.ConfigFile, d.logger); err != nil {
		d.logger.Warn("Keeping the running config", "file", d.opts.ConfigFile)
		return err
	}
	d.apply()
	return nil
}

// apply hands the loaded config to the scheduler (which forgets the series
// of removed probes) and creates the live series of every configured probe,
// all at 0, so that rate() and increase() work from a probe's first run on.
func (d *Daemon) apply() {
	cfg := d.sc.Get()
	for _, n := range prober.FileNeeds(cfg.Plans(), d.opts.Shard) {
		d.logger.Warn("A level may not fit the file-descriptor limit", "probe", n.Probe, "level", n.Level, "needs", n.Needs, "limit", n.Limit)
	}
	d.sched.Apply(cfg)
	for _, p := range cfg.Plans() {
		d.coll.Live(p.Name)
		d.coll.DeclareFlow(p)
		d.coll.DeclareGuards(p)
	}
}

// stopRuns ends every run and waits for the scheduler's loops to end:
// bounded, as each run returns within 2s of its cancel.
func (d *Daemon) stopRuns() {
	d.stop()
	d.sched.Wait()
}
