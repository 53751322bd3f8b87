package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/common/version"
)

// What -ldflags set is kept; what they did not is filled from the build info,
// so --version, loadprobe_build_info and the status page never show an empty
// version.
func TestFillVersion(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "8d5e3f0"},
		{Key: "vcs.time", Value: "2026-11-30T23:16:30Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name                    string
		ldVersion, ldRevision   string
		info                    *debug.BuildInfo
		version, revision, date string
	}{
		{name: "make build", ldVersion: "1.2.3", ldRevision: "abc",
			info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, version: "1.2.3", revision: "abc", date: "2026-11-30T23:16:30Z"},
		{name: "go build in a checkout",
			info:    &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130231630-8d5e3f0+dirty"}, Settings: vcs},
			version: "0.0.0-20261130231630-8d5e3f0+dirty", revision: "8d5e3f0-modified", date: "2026-11-30T23:16:30Z"},
		{name: "go install module@v1.4.0",
			info: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, version: "1.4.0"},
		{name: "go run", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, version: "devel"},
		{name: "no build info", version: "devel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := [3]string{version.Version, version.Revision, version.BuildDate}
			t.Cleanup(func() { version.Version, version.Revision, version.BuildDate = saved[0], saved[1], saved[2] })
			version.Version, version.Revision, version.BuildDate = tc.ldVersion, tc.ldRevision, ""
			fillVersion(tc.info)
			if version.Version != tc.version || version.Revision != tc.revision || version.BuildDate != tc.date {
				t.Errorf("version %q revision %q date %q, want %q %q %q",
					version.Version, version.Revision, version.BuildDate, tc.version, tc.revision, tc.date)
			}
		})
	}
}

// A binary built without -ldflags, as go build and go run make it, names a
// version in --version.
func TestVersionWithoutLdflags(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "loadprobe")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if strings.Contains(first, "version  ") || strings.Contains(first, "version (") || !strings.HasPrefix(first, "loadprobe, version ") {
		t.Errorf("--version without -ldflags: %q, want a version named", first)
	}
	t.Log(first)
}
