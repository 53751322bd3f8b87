package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// allowedImports is the package graph of docs/design.md, "Architecture":
// data flows one way, config → result → prober → schedule → daemon → main,
// and the readers of results (collector, statuspage, fleet) never reach
// into the engine or the scheduler. Each package lists the project
// packages its production code may import; internal/… helpers are open to
// all. A package missing here is a new one: add it where it belongs.
var allowedImports = map[string][]string{
	"":                     {"*"},
	"daemon":               {"config", "result", "prober", "schedule", "collector", "fleet", "statuspage"},
	"schedule":             {"config", "result", "prober"},
	"prober":               {"config", "config/template", "result", "guard"},
	"guard":                {"config", "result"},
	"result":               {"config"},
	"config":               {"config/template"},
	"config/template":      {},
	"collector":            {"config", "result"},
	"fleet":                {"config", "result", "collector"},
	"statuspage":           {"config", "result"},
	"demo/target":          {},
	"internal/realpart":    {},
	"internal/regularfile": {},
	"internal/testkit":     {},
	// Test-only packages and tools: they may read anything.
	"dashboards":        {"*"},
	"integration":       {"*"},
	"bench/delaytarget": {"*"},
	"bench/soak":        {"*"},
	"bench/wscompare":   {"*"},
}

const module = "github.com/loadprobe/loadprobe"

func TestPackageGraphFlowsOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("package %q is not in the allowed graph (layout_test.go)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			own, ok := strings.CutPrefix(imp, module+"/")
			if !ok || strings.HasPrefix(own, "internal/") || slices.Contains(allowed, "*") {
				continue
			}
			if !slices.Contains(allowed, own) {
				t.Errorf("%s imports %s: against the one-way graph (docs/design.md, \"Architecture\")", fields[0], own)
			}
		}
	}
}
