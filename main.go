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
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/loadprobe/loadprobe/daemon"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/prober"

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
	storagePath     *string
	paused          *bool
	shard           *config.Shard        // --shard (shard.go)
	fleet           *daemon.FleetOptions // --fleet.* (fleet.go)
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
	g.enableLifecycle = app.Flag("web.enable-lifecycle", "Enable the HTTP endpoints that change state: POST /-/reload, /-/pause, /-/resume and /api/v1/probes/NAME/run.").Bool()
	g.paused = app.Flag("paused", "Start with the pause switch on: no load is sent until POST /-/resume.").Bool()
	g.shard = addShardFlag(app)
	g.fleet = addFleetFlags(app)
	g.storagePath = app.Flag("storage.path", "Directory where the latest results are kept, so a restarted daemon serves them at once. Empty: keep none.").Default("").String()
	return app, g
}

func main() {
	os.Exit(run())
}

// init stamps the version before anything reads it: the commands, the
// daemon's build_info and status page, and the daemons the tests start
// in-process.
func init() {
	info, _ := debug.ReadBuildInfo()
	fillVersion(info)
}

func run() int {
	app, g := newApp()
	// The daemon is the default command.
	daemonCmd := app.Command("daemon", "Schedule the configured probes and serve /metrics (the default).").Default().Hidden()

	runCmd := app.Command("run", "Run probes once in the foreground and print their results; exit 0 when every expectation holds, 1 when one does not, 2 on a usage or config error.")
	runProbes := runCmd.Flag("probe", "Name of a probe to run (repeatable); default: all.").Strings()
	runOutput := runCmd.Flag("output", "Result format: table or json.").Default("table").Enum("table", "json")

	targetCmd := app.Command("target", "Serve the built-in demo target on loopback.")
	targetListen := targetCmd.Flag("listen", "Loopback address to listen on.").Default("127.0.0.1:8080").String()
	targetOpts := target.Options{}
	targetCmd.Flag("workers", "Size of the /work pool: its knee.").Default("4").IntVar(&targetOpts.Workers)
	targetCmd.Flag("work-time", "How long /work holds a worker.").Default("10ms").DurationVar(&targetOpts.WorkTime)
	targetWork := targetCmd.Flag("work", "How /work spends its time: sleep or cpu.").Default("sleep").Enum("sleep", "cpu")

	demoCmd := app.Command("demo", "Start the demo target on a free loopback port and the daemon probing it with an embedded demo config.")

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
	case runCmd.FullCommand():
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runOnce(ctx, *g.configFile, *runProbes, *runOutput, *g.shard, os.Stdout, os.Stderr)
	case targetCmd.FullCommand():
		targetOpts.CPU = *targetWork == "cpu"
		return serveTarget(*targetListen, targetOpts, logger)
	case demoCmd.FullCommand():
		return runDemo(g, logger, os.Stdout)
	default:
		fmt.Fprintf(os.Stderr, "loadprobe: unknown command %q\n", cmd)
		return 2
	}
}

// fillVersion fills the build metadata that no -ldflags set (`make build`
// sets them all; `go build`, `go install` and `go run` set none) from the
// build info Go records in every binary: the module's version, and the VCS
// revision and commit time where the go command stamped them (go build in a
// git checkout does, go run does not). --version, loadprobe_build_info and the
// status page read what it leaves, so none of them shows an empty version.
func fillVersion(info *debug.BuildInfo) {
	if version.Version == "" {
		version.Version = "devel"
		if info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version.Version = strings.TrimPrefix(info.Main.Version, "v")
		}
	}
	if info == nil {
		return
	}
	var revision, modified, date string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			date = s.Value
		}
	}
	if version.Revision == "" && revision != "" {
		version.Revision = revision
		if modified == "true" {
			version.Revision += "-modified"
		}
	}
	if version.BuildDate == "" {
		version.BuildDate = date
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
	for _, n := range prober.FileNeeds(sc.Get().Probes, config.Shard{}) {
		fmt.Fprintln(stderr, "warning:", n)
	}
	return 0
}

// newDaemon builds the daemon the flags describe, reading configFile.
func (g *globalFlags) newDaemon(configFile string, logger *slog.Logger) (*daemon.Daemon, error) {
	return daemon.New(daemon.Options{
		ConfigFile:      configFile,
		Web:             g.web,
		EnableLifecycle: *g.enableLifecycle,
		StoragePath:     *g.storagePath,
		Paused:          *g.paused,
		Shard:           *g.shard,
		Fleet:           *g.fleet,
		Logger:          logger,
	})
}

func runDaemon(g *globalFlags, logger *slog.Logger) int {
	logger.Info("Starting loadprobe", "version", version.Info())
	logger.Info("Build context", "build_context", version.BuildContext())

	d, err := g.newDaemon(*g.configFile, logger)
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
