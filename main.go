// Command loadprobe is a Prometheus-native exporter and continuous capacity
// prober: it runs scheduled load against HTTP services its operator owns and
// exports what it measures as metrics.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/loadprobe/loadprobe/config"
)

// defaultListenAddress is outside the fully allocated 9100–9999 exporter range.
const defaultListenAddress = ":10471"

// globalFlags are the flags every command shares: the daemon's, which `demo`
// also takes, and --config.file, which `run` also reads.
type globalFlags struct {
	log             *promslog.Config
	configFile      *string
	configCheck     *bool
	web             *web.FlagConfig
	enableLifecycle *bool
}

func newApp() (*kingpin.Application, *globalFlags) {
	app := kingpin.New("loadprobe", "A Prometheus-native exporter and continuous capacity prober: scheduled load ramps against HTTP services you own, exported as metrics.")
	app.UsageWriter(os.Stdout)
	app.Version(version.Print("loadprobe"))
	app.HelpFlag.Short('h')

	g := &globalFlags{log: &promslog.Config{}}
	promslogflag.AddFlags(app, g.log)
	g.configFile = app.Flag("config.file", "loadprobe configuration file.").Default("loadprobe.yml").String()
	g.configCheck = app.Flag("config.check", "Validate the configuration file and exit: 0 when it is valid, 1 when it is not.").Bool()
	g.web = kingpinflag.AddFlags(app, defaultListenAddress)
	g.enableLifecycle = app.Flag("web.enable-lifecycle", "Enable the HTTP endpoints that change state: POST /-/reload.").Bool()
	return app, g
}

func main() {
	os.Exit(run())
}

func run() int {
	app, g := newApp()
	// The daemon is the default command. Other commands (run, target, demo)
	// add their clause here and their case to the switch below.
	daemonCmd := app.Command("daemon", "Schedule the configured probes and serve /metrics (the default).").Default().Hidden()

	cmd, err := app.Parse(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadprobe: error: %s, try --help\n", err)
		return 2
	}
	logger := promslog.New(g.log)

	if *g.configCheck {
		return checkConfig(*g.configFile, os.Stdout, os.Stderr)
	}

	switch cmd {
	case daemonCmd.FullCommand():
		return runDaemon(g, logger)
	default:
		fmt.Fprintf(os.Stderr, "loadprobe: unknown command %q\n", cmd)
		return 2
	}
}

// checkConfig validates a config file: 0 when it is valid, 1 when it is not,
// with the errors (each naming file:line) on stderr.
func checkConfig(file string, stdout, stderr io.Writer) int {
	sc := config.NewSafeConfig(prometheus.NewRegistry())
	if err := sc.ReloadConfig(file, promslog.NewNopLogger()); err != nil {
		fmt.Fprintf(stderr, "%s is not valid:\n%s\n", file, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s is valid: %d probes\n", file, len(sc.Get().Probes))
	return 0
}

func runDaemon(g *globalFlags, logger *slog.Logger) int {
	logger.Info("Starting loadprobe", "version", version.Info())
	logger.Info("Build context", "build_context", version.BuildContext())

	d, err := NewDaemon(DaemonOptions{
		ConfigFile:      *g.configFile,
		Web:             g.web,
		EnableLifecycle: *g.enableLifecycle,
		Logger:          logger,
	})
	if err != nil {
		logger.Error("Error setting up", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := d.Run(ctx); err != nil {
		logger.Error("Error running loadprobe", "err", err)
		return 1
	}
	return 0
}
