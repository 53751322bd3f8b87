package main

import (
	"context"
	"encoding/json"
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

	"github.com/loadprobe/loadprobe/prober/result"
	"github.com/loadprobe/loadprobe/prober/schedule"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/loadprobe/loadprobe/collector"
	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/prober"
	statuspage "github.com/loadprobe/loadprobe/web"
)

// shutdownTimeout bounds how long in-flight HTTP requests may take once the
// daemon is told to stop; then their connections are closed.
const shutdownTimeout = 2 * time.Second

// DaemonOptions configure a Daemon.
type DaemonOptions struct {
	ConfigFile      string
	Web             *web.FlagConfig // listen addresses and --web.config.file
	EnableLifecycle bool            // POST /-/reload and POST /api/v1/probes/NAME/run
	StoragePath     string          // where the latest results are kept across restarts; "" keeps none
	Shard           prober.Shard    // this replica's part of a fleet (--shard); zero: a lone loadprobe
	Fleet           FleetOptions    // where replica 0 reads the fleet's runs back (--fleet.*)
	Logger          *slog.Logger
	// Hup delivers reload requests; nil means the process's SIGHUP.
	Hup <-chan os.Signal
}

// Daemon is loadprobe's long-running server: it holds the config, the
// registry, the collector and the scheduler, and serves them over HTTP.
type Daemon struct {
	opts    DaemonOptions
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

// NewDaemon builds a daemon with its own registry (never the global one,
// which imported libraries write to).
func NewDaemon(o DaemonOptions) (*Daemon, error) {
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
	var store *schedule.Store
	if o.StoragePath != "" {
		var err error
		if store, err = schedule.NewStore(o.StoragePath); err != nil {
			return nil, err
		}
	}
	// Runs outlive no daemon: Run ends them when its context ends.
	ctx, stop := context.WithCancel(context.Background())
	d.stop = stop
	d.coll = collector.New(d.reg, d)
	sched, err := schedule.New(ctx, prober.Run, d.coll, store, o.Logger)
	if err != nil {
		stop()
		return nil, err
	}
	d.sched = sched
	sched.SetShard(o.Shard)
	collector.RegisterShard(d.reg, o.Shard)
	if err := d.setUpFleet(); err != nil {
		stop()
		return nil, err
	}
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

	srv := &http.Server{
		Handler:           d.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(d.logger.Handler(), slog.LevelError),
	}
	listeners, err := d.listen()
	if err != nil {
		return err
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

	for {
		select {
		case <-hup:
			_ = d.reload() // logged, and the gauge says it
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
	d.sched.Apply(cfg)
	for _, p := range cfg.Probes {
		d.coll.Live(p.Name)
	}
}

// stopRuns ends every run and waits for the scheduler's loops to end:
// bounded, as each run returns within 2s of its cancel.
func (d *Daemon) stopRuns() {
	d.stop()
	d.sched.Wait()
}

// Snapshot implements collector.Source: every configured probe's state.
func (d *Daemon) Snapshot() []schedule.ProbeState { return d.sched.Snapshot() }

// lifecycle guards an endpoint that changes state: only with
// --web.enable-lifecycle (doing what says what it would have done), only by POST.
func (d *Daemon) lifecycle(doing string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !d.opts.EnableLifecycle {
			http.Error(w, "Lifecycle API is not enabled: start loadprobe with --web.enable-lifecycle to "+doing+".", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "This endpoint requires a POST request.", http.StatusMethodNotAllowed)
			return
		}
		h(w, r)
	}
}

func (d *Daemon) routes() http.Handler {
	mux := http.NewServeMux()

	metrics := promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(d.logger.Handler(), slog.LevelError),
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          d.reg,
		EnableOpenMetrics: true,
	})
	mux.Handle("/metrics", promhttp.InstrumentMetricHandler(d.reg, metrics))

	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "loadprobe is Healthy.")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !d.ready.Load() {
			http.Error(w, "loadprobe is not ready: the config is not loaded yet.", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "loadprobe is Ready.")
	})
	mux.HandleFunc("/-/reload", d.lifecycle("reload over HTTP, or send it SIGHUP", func(w http.ResponseWriter, _ *http.Request) {
		if err := d.reload(); err != nil {
			http.Error(w, fmt.Sprintf("failed to reload config: %s", err), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "Config reloaded.")
	}))
	mux.HandleFunc("/config", func(w http.ResponseWriter, _ *http.Request) {
		cfg := d.sc.Get()
		if cfg == nil {
			http.Error(w, "no config loaded", http.StatusServiceUnavailable)
			return
		}
		out, err := cfg.Redacted()
		if err != nil {
			d.logger.Warn("Error marshalling the config", "err", err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(out)
	})
	mux.HandleFunc("/api/v1/results", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Probes []result.Result `json:"probes"`
		}{d.sched.Results()}); err != nil {
			d.logger.Warn("Error writing results", "err", err)
		}
	})
	mux.HandleFunc("/api/v1/probes/{name}/run", d.lifecycle("start runs over HTTP", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if err := d.sched.Trigger(name); err != nil {
			http.Error(w, fmt.Sprintf("%s: %q", err, name), http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "Run of %s requested.\n", name)
	}))
	landing := statuspage.StatusHandler(version.Info(), []statuspage.Link{
		{Href: "/metrics", Text: "Metrics"},
		{Href: "/api/v1/results", Text: "Results"},
		{Href: "/config", Text: "Configuration"},
	}, d.sched.Snapshot)
	mux.Handle("/", landing)
	return mux
}
