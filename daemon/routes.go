package daemon

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loadprobe/loadprobe/internal/finitejson"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/statuspage"
)

// crossOrigin refuses the requests a browser marks as sent from another
// origin than the daemon's own.
var crossOrigin = http.NewCrossOriginProtection()

// lifecycle guards an endpoint that changes state: only with
// --web.enable-lifecycle (doing what says what it would have done), only by
// POST, and not from a page on another origin.
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
		// A page on another origin can make a browser send a simple POST,
		// with its cached credentials: a browser says where it came from
		// (Sec-Fetch-Site, Origin), a script or curl sends neither
		// (docs/security.md, "The lifecycle endpoints").
		if err := crossOrigin.Check(r); err != nil {
			http.Error(w, "Refused: a request from another origin cannot "+doing+".", http.StatusForbidden)
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
		if err := finitejson.WriteIndented(w, struct {
			Probes []result.Result `json:"probes"`
		}{d.sched.Results()}); err != nil {
			d.logger.Warn("Error writing results", "err", err)
			http.Error(w, err.Error(), http.StatusInternalServerError) // nothing written yet when the encoding failed
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
	mux.HandleFunc("/-/pause", d.lifecycle("stop all load over HTTP", func(w http.ResponseWriter, _ *http.Request) {
		d.sched.Pause()
		d.logger.Warn("Paused: every run under way is stopped and none starts until POST /-/resume")
		fmt.Fprintln(w, "Paused: all load stopped.")
	}))
	mux.HandleFunc("/-/resume", d.lifecycle("let load start again over HTTP", func(w http.ResponseWriter, _ *http.Request) {
		d.sched.Resume()
		d.logger.Info("Resumed: runs start again")
		fmt.Fprintln(w, "Resumed.")
	}))
	landing := statuspage.StatusHandler(VersionText(), []statuspage.Link{
		{Href: "/metrics", Text: "Metrics"},
		{Href: "/api/v1/results", Text: "Results"},
		{Href: "/config", Text: "Configuration"},
	}, d.sched.Snapshot, d.sched.Paused)
	mux.Handle("/", landing)
	return mux
}
