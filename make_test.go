package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestMakeHelpListsEveryTarget: `make help` names every target of the
// Makefile with its description, and every target is phony.
func TestMakeHelpListsEveryTarget(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := regexp.MustCompile(`(?m)^([a-z][a-z-]*):([^=]|$)`).FindAllStringSubmatch(string(makefile), -1)
	if len(targets) < 10 {
		t.Fatalf("found %d targets in the Makefile, want at least 10", len(targets))
	}
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Fatal("make is not installed: apt-get install make")
	}
	out, err := exec.Command(makeBin, "--no-print-directory", "help").CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	phony := regexp.MustCompile(`(?m)^\.PHONY:(.*)$`).FindStringSubmatch(string(makefile))
	for _, m := range targets {
		name := m[1]
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` +\S`).Match(out) {
			t.Errorf("make help does not list %s with a description:\n%s", name, out)
		}
		if phony == nil || !strings.Contains(phony[1]+" ", " "+name+" ") {
			t.Errorf("%s is not in .PHONY", name)
		}
	}
	if !strings.Contains(string(out), "deploy-rules") {
		t.Errorf("make help lacks deploy-rules:\n%s", out)
	}
}
