package main

import (
	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/loadprobe/loadprobe/daemon"
	"github.com/loadprobe/loadprobe/fleet"
)

// flagGroup is what flags are added to: the application (flags every
// command takes) or one command (its own).
type flagGroup interface {
	Flag(name, help string) *kingpin.FlagClause
}

// daemonFlags are the flags of the daemon (the default mode: no command),
// most of which `demo` takes too.
type daemonFlags struct {
	configFile      *string
	configSet       bool // --config.file was given
	configCheck     *bool
	web             *web.FlagConfig
	enableLifecycle *bool
	storagePath     *string
	paused          *bool
	shard           *fleet.Shard         // --shard (shard.go)
	fleet           *daemon.FleetOptions // --fleet.* (fleet.go)
}

// addDaemonFlags adds the daemon's flags to cmd: all of them, its config and
// fleet flags included, or (for `demo`, whose config is built in and which is
// no fleet) the web, lifecycle, pause and storage flags only.
func addDaemonFlags(cmd *kingpin.CmdClause, listen string, withConfig bool) *daemonFlags {
	f := &daemonFlags{shard: &fleet.Shard{Index: 0, Count: 1}, fleet: &daemon.FleetOptions{}}
	if withConfig {
		f.configFile = addConfigFileFlag(cmd, "loadprobe configuration file.", &f.configSet)
		f.configCheck = cmd.Flag("config.check", "Validate the configuration file and exit: 0 when it is valid, 1 when it is not.").Bool()
	}
	f.web = kingpinflag.AddFlags(cmd, listen)
	f.enableLifecycle = cmd.Flag("web.enable-lifecycle", "Enable the HTTP endpoints that change state: POST /-/reload, /-/pause, /-/resume and /api/v1/probes/NAME/run.").Bool()
	f.paused = cmd.Flag("paused", "Start with the pause switch on: no load is sent until POST /-/resume.").Bool()
	f.storagePath = cmd.Flag("storage.path", "Directory where the latest results are kept, so a restarted daemon serves them at once. Empty: keep none.").Default("").String()
	if withConfig {
		f.shard = addShardFlag(cmd)
		f.fleet = addFleetFlags(cmd)
	}
	return f
}

// addConfigFileFlag adds --config.file; set says whether it was given.
func addConfigFileFlag(fg flagGroup, help string, set *bool) *string {
	return fg.Flag("config.file", help).IsSetByUser(set).Default(defaultConfigFile).String()
}

// usageTemplate is kingpin's default usage with two changes: a command's
// own flags come first, before the few that every command takes, and the
// top-level usage says that no command is the daemon, and lists its flags.
const usageTemplate = `{{define "FormatCommand" -}}
{{if .FlagSummary}} {{.FlagSummary}}{{end -}}
{{range .Args}}{{if not .Hidden}} {{if not .Required}}[{{end}}{{if .PlaceHolder}}{{.PlaceHolder}}{{else}}<{{.Name}}>{{end}}{{if .Value|IsCumulative}}...{{end}}{{if not .Required}}]{{end}}{{end}}{{end -}}
{{end -}}

{{define "FormatCommands" -}}
{{range .FlattenedCommands}}{{if not .Hidden}}  {{.FullCommand}}{{template "FormatCommand" .}}
{{.Help|Wrap 4}}
{{end}}{{end -}}
{{end -}}

{{define "Daemon" -}}
usage: {{.App.Name}} [<flags>]
       {{.App.Name}} <command> [<flags>]

{{.App.Help|Wrap 0}}
With no command, loadprobe is the daemon: it schedules the configured probes and
serves /metrics, with the flags below.

Daemon flags (no command):
{{range .App.Commands}}{{if .Default}}{{.Flags|FlagsToTwoColumns|FormatTwoColumns}}{{end}}{{end -}}
{{end -}}

{{if .Context.SelectedCommand -}}
{{if .Context.SelectedCommand.Default -}}
{{template "Daemon" .}}
{{- else -}}
usage: {{.App.Name}} {{.Context.SelectedCommand}}{{template "FormatCommand" .Context.SelectedCommand}}

{{.Context.SelectedCommand.Help|Wrap 0}}
Flags:
{{.Context.SelectedCommand.Flags|FlagsToTwoColumns|FormatTwoColumns}}
{{end -}}
Flags of every command:
{{.App.Flags|FlagsToTwoColumns|FormatTwoColumns}}
{{- else -}}
{{template "Daemon" .}}
Flags of every command:
{{.App.Flags|FlagsToTwoColumns|FormatTwoColumns}}
Commands:
{{template "FormatCommands" .App}}
{{- end -}}
`
