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

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/daemon"
	"github.com/loadprobe/loadprobe/demo/target"
	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober"
)

// defaultListenAddress is outside the fully allocated 9100–9999 exporter
// range. The demo listens on loopback only: a trial on one's own machine,
// whose endpoints are open to whoever reaches them (docs/security.md).
const (
	defaultListenAddress = ":10471"
	demoListenAddress    = "127.0.0.1:10471"
)

// commands holds the command line: the flags every command takes (the
// log's), and each command with its own.
type commands struct {
	app *kingpin.Application
	log *promslog.Config

	daemon      *kingpin.CmdClause // the default: no command
	daemonFlags *daemonFlags

	run                      *kingpin.CmdClause
	runConfig                *string
	runConfigSet             bool // --config.file was given
	runURL                   *urlProbe
	runProbes                *[]string
	runOutput                *string
	runShard                 *fleet.Shard
	runFleet                 *daemon.FleetOptions
	runListen                *string
	target                   *kingpin.CmdClause
	targetAt                 *string
	targetOpts               target.Options
	targetWork               *string
	targetGRPC               *string
	targetH3                 *string
	demo                     *kingpin.CmdClause
	demoFlags                *daemonFlags
	compare                  *kingpin.CmdClause
	compareBase, compareCand *string
	compareOutput            *string
	compareRules             plan.Compare
	// demoPrometheus is --demo.prometheus-url.
	demoPrometheus *string
}

func newCommands() *commands {
	c := &commands{log: &promslog.Config{}}
	c.app = kingpin.New("loadprobe", "A Prometheus-native exporter and continuous capacity prober: scheduled load ramps against HTTP, gRPC and WebSocket services you own, exported as metrics.")
	c.app.UsageWriter(os.Stdout)
	c.app.UsageTemplate(usageTemplate)
	c.app.Version(version.Print("loadprobe"))
	c.app.HelpFlag.Short('h')
	promslogflag.AddFlags(c.app, c.log)

	// Its flags come without a command: kingpin takes an unknown flag
	// for the default command's.
	c.daemon = c.app.Command("daemon", "Schedule the configured probes and serve /metrics (the default).").Default().Hidden()
	c.daemonFlags = addDaemonFlags(c.daemon, defaultListenAddress, true)

	c.run = c.app.Command("run", "Run probes once in the foreground and print their results; exit 0 when every expectation holds, 1 when one does not, 2 on a usage or config error.")
	c.runConfig = addConfigFileFlag(c.run, "loadprobe configuration file; - reads it from standard input.", &c.runConfigSet)
	c.runProbes = c.run.Flag("probe", "Name of a probe to run (repeatable); default: all.").Strings()
	c.runOutput = c.run.Flag("output", "Result format: table, json, or html (one self-contained page with the charts, to attach to a pull request).").Default("table").Enum("table", "json", "html")
	c.runShard = addShardFlag(c.run)
	c.runURL = addURLFlags(c.run)
	c.runFleet = addFleetFlags(c.run)
	c.runListen = c.run.Flag("web.listen-address", "With --shard and --fleet.prometheus-url, this run is a replica of a one-shot fleet: the address it serves /metrics on while it lasts, for that Prometheus to scrape (docs/fleet.md). Default: none.").String()

	c.compare = c.app.Command("compare", "Judge a candidate's results against its baseline's, two results files of the same probes (run --output=json or /api/v1/results): exit 1 when a candidate lost capacity, 2 on a usage error.")
	c.compareBase = c.compare.Arg("baseline", "Results file of the baseline.").Required().String()
	c.compareCand = c.compare.Arg("candidate", "Results file of the candidate.").Required().String()
	c.compare.Flag("max-loss", "The candidate fails when its capacity is surely below 1 - max-loss of the baseline's.").Default("0.05").Float64Var(&c.compareRules.MaxLoss)
	c.compare.Flag("max-latency-gain", "The candidate fails when its p99 at the baseline's capacity level is surely above 1 + max-latency-gain of the baseline's.").Default("0.1").Float64Var(&c.compareRules.MaxLatencyGain)
	c.compare.Flag("confidence", "Confidence of the capacity and p99 ratios' intervals.").Default("0.95").Float64Var(&c.compareRules.Confidence)
	c.compareOutput = c.compare.Flag("output", "Verdict format: table or json.").Default("table").Enum("table", "json")

	c.target = c.app.Command("target", "Serve the built-in demo target on loopback.")
	c.targetAt = c.target.Flag("listen", "Loopback address to listen on.").Default("127.0.0.1:8080").String()
	c.target.Flag("workers", "Size of the /work pool: its knee.").Default("4").IntVar(&c.targetOpts.Workers)
	c.target.Flag("work-time", "How long /work holds a worker.").Default("10ms").DurationVar(&c.targetOpts.WorkTime)
	c.targetWork = c.target.Flag("work", "How /work spends its time: sleep or cpu.").Default("sleep").Enum("sleep", "cpu")
	c.targetGRPC = c.target.Flag("grpc-listen", "Loopback address to serve the gRPC service loadprobe.demo.v1.Target on; default: none.").String()
	c.targetH3 = c.target.Flag("h3-listen", "Loopback UDP address to serve the demo target over HTTP/3 on, with a self-signed certificate; default: none.").String()

	c.demo = c.app.Command("demo", "Start the demo targets on free loopback ports and the daemon probing them with an embedded demo config; the daemon listens on "+demoListenAddress+" unless --web.listen-address says otherwise.")
	c.demoFlags = addDaemonFlags(c.demo, demoListenAddress, false)
	c.demoPrometheus = c.demo.Flag("demo.prometheus-url", "Prometheus that scrapes the demo targets' own metrics: the work probe's telemetry reads its headroom and bottleneck there (docs/telemetry.md); default: no telemetry.").String()
	return c
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
	c := newCommands()
	cmd, err := c.app.Parse(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadprobe: error: %s, try --help\n", err)
		return 2
	}
	logger := promslog.New(c.log)

	switch cmd {
	case c.daemon.FullCommand():
		if *c.daemonFlags.configCheck {
			return checkConfig(*c.daemonFlags.configFile, os.Stdout, os.Stderr)
		}
		return runDaemon(c.daemonFlags, logger)
	case c.run.FullCommand():
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		source := probeSource{file: *c.runConfig, fileSet: c.runConfigSet, url: c.runURL, stdin: os.Stdin}
		fl, err := newOneShot(*c.runShard, *c.runFleet, *c.runListen)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return exitUsageErr
		}
		return runOnce(ctx, source, *c.runProbes, *c.runOutput, *c.runShard, fl, os.Stdout, os.Stderr)
	case c.compare.FullCommand():
		if r := c.compareRules; !(r.Confidence > 0 && r.Confidence < 1) || !(r.MaxLoss >= 0 && r.MaxLoss < 1) || !(r.MaxLatencyGain >= 0) {
			fmt.Fprintf(os.Stderr, "loadprobe compare: --confidence must be in (0, 1), --max-loss in [0, 1) and --max-latency-gain 0 or more (got %g, %g and %g)\n",
				r.Confidence, r.MaxLoss, r.MaxLatencyGain)
			return 2
		}
		return compareFiles(*c.compareBase, *c.compareCand, c.compareRules, *c.compareOutput, os.Stdout, os.Stderr)
	case c.target.FullCommand():
		c.targetOpts.CPU = *c.targetWork == "cpu"
		return serveTarget(*c.targetAt, *c.targetGRPC, *c.targetH3, c.targetOpts, logger)
	case c.demo.FullCommand():
		return runDemo(c.demoFlags, *c.demoPrometheus, logger, os.Stdout)
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
	fmt.Fprintf(stdout, "%s is valid: %s\n", file, plural(len(sc.Get().Probes), "probe"))
	for _, n := range prober.FileNeeds(sc.Get().Plans(), fleet.Shard{}) {
		fmt.Fprintln(stderr, "warning:", n)
	}
	return 0
}

// plural is "1 probe", "2 probes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// newDaemon builds the daemon the flags describe, reading configFile.
func (g *daemonFlags) newDaemon(configFile string, logger *slog.Logger) (*daemon.Daemon, error) {
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

func runDaemon(g *daemonFlags, logger *slog.Logger) int {
	logger.Info("Starting loadprobe", "version", version.Info())
	logger.Info("Build context", "build_context", version.BuildContext())

	if err := missingDefault(*g.configFile, g.configSet); err != nil {
		logger.Error("Error setting up", "err", err)
		return 1
	}
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
