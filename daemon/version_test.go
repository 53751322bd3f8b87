package daemon

import (
	"testing"

	"github.com/prometheus/common/version"
)

// The header names what the build recorded and leaves out what it did
// not: `go run .` records no branch, revision or date.
func TestVersionText(t *testing.T) {
	saved := []string{version.Version, version.Revision, version.Branch, version.BuildDate}
	t.Cleanup(func() {
		version.Version, version.Revision, version.Branch, version.BuildDate = saved[0], saved[1], saved[2], saved[3]
	})
	for _, tc := range []struct{ name, v, rev, branch, date, want string }{
		{"go run", "devel", "unknown", "", "", "version devel · " + version.GoVersion},
		{"nothing set", "", "", "", "", "version devel · " + version.GoVersion},
		{"go build in a checkout", "devel", "0123456789abcdef0123456789abcdef01234567-modified", "", "2026-12-01T10:00:00Z",
			"version devel · revision 0123456789ab-modified · built 2026-12-01T10:00:00Z · " + version.GoVersion},
		{"make build", "1.2.3", "0123456789abcdef0123456789abcdef01234567", "main", "20261201-10:00:00",
			"version 1.2.3 · revision 0123456789ab · branch main · built 20261201-10:00:00 · " + version.GoVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version.Version, version.Revision, version.Branch, version.BuildDate = tc.v, tc.rev, tc.branch, tc.date
			if got := VersionText(); got != tc.want {
				t.Errorf("VersionText() = %q, want %q", got, tc.want)
			}
		})
	}
}
