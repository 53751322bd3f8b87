package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// allowedImports is the package graph of docs/design.md, "Architecture":
// data flows one way, config → plan → schedule → prober → result →
// (collector, statuspage, fleet readback) → daemon → main. The readers of
// results never reach into the engine or the scheduler, and no transport
// (prober/transport/…) imports the engine: it speaks a protocol, the
// engine knows load and time. Each package lists the project packages its
// production code may import; internal/… helpers are open to all. A
// package missing here is a new one: add it where it belongs.
var allowedImports = map[string][]string{
	"":                     {"*"},
	"daemon":               {"config", "plan", "result", "prober", "schedule", "collector", "fleet", "statuspage", "prober/live", "schedule/state", "fleet/readback"},
	"schedule":             {"config", "plan", "result", "result/analysis", "prober", "prober/live", "schedule/state", "fleet"},
	"schedule/state":       {"plan", "result"},
	"prober":               {"config/template", "plan", "result", "result/analysis", "telemetry", "prober/live", "prober/transport", "fleet"},
	"prober/live":          {"result"},
	"prober/transport":     {"config/template", "plan", "prober/live", transportPkg + "grpc", transportPkg + "h1", transportPkg + "h3", transportPkg + "std", transportPkg + "ws", wirePkg},
	transportPkg + "h1":    {"config/template", "plan", "result", transportPkg + "h2", wirePkg},
	transportPkg + "h2":    {wirePkg},
	transportPkg + "grpc":  {"config/template", "plan", "result", "prober/live", transportPkg + "h2", wirePkg},
	transportPkg + "std":   {"config/template", "plan", "result", wirePkg},
	transportPkg + "h3":    {"plan", "result", transportPkg + "std", wirePkg},
	transportPkg + "ws":    {"config/template", "plan", "result", "prober/live", wirePkg},
	wirePkg:                {"config/template", "plan", "result"},
	"telemetry":            {"plan", "result", "prober/live"},
	"result":               {"plan"},
	"result/analysis":      {"plan", "result"},
	"config":               {"config/template", "config/script", "plan", "fleet"},
	"config/script":        {"config/template", "plan"},
	"plan":                 {"config/template"},
	"config/template":      {},
	"collector":            {"config", "plan", "result", "prober/live", "schedule/state", "fleet"},
	"fleet":                {"plan"},
	"fleet/readback":       {"config", "plan", "result", "result/analysis", "collector", "schedule/state", "fleet"},
	"statuspage":           {"plan", "result", "result/analysis", "schedule/state"},
	"demo/target":          {},
	"internal/finitejson":  {},
	"internal/grpcdesc":    {},
	"internal/promapi":     {},
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

// The transports' packages, and what they share.
const (
	transportPkg = "prober/transport/"
	wirePkg      = transportPkg + "internal/wire"
)

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
			if strings.HasPrefix(pkg, "prober/transport") && imp == module+"/prober" {
				t.Errorf("%s imports the engine: a transport knows the wire, not load and time", fields[0])
			}
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

// Sizes that keep a reader's way short: no production file over 500
// lines, no function over 80.
const (
	maxFileLines = 500
	maxFuncLines = 80
)

func TestProductionSizes(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s: %d lines, more than %d: split it by what it holds", path, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: func %s is %d lines, more than %d", fset.Position(fn.Pos()), fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
