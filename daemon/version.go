package daemon

import (
	"strings"

	"github.com/prometheus/common/version"
)

// VersionText is the build the status page and run's report name, from the
// prometheus/common version variables (set by `make build`'s -ldflags, or
// from the binary's build info at start: docs/commands.md, "The status page"),
// leaving out what nobody set: `go run .` has no branch, no revision and
// no build date, and "(version=devel, branch=, revision=unknown)" says
// nothing a reader can use.
func VersionText() string {
	v := version.Version
	if v == "" {
		v = "devel"
	}
	parts := []string{"version " + v}
	if rev := version.GetRevision(); rev != "" && rev != "unknown" {
		// A commit hash reads in its first 12 digits, as git shows it.
		short, modified := strings.CutSuffix(rev, "-modified")
		if len(short) > 12 {
			short = short[:12]
		}
		if modified {
			short += "-modified"
		}
		parts = append(parts, "revision "+short)
	}
	if version.Branch != "" {
		parts = append(parts, "branch "+version.Branch)
	}
	if version.BuildDate != "" {
		parts = append(parts, "built "+version.BuildDate)
	}
	return strings.Join(append(parts, version.GoVersion), " · ")
}
