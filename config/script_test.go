package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A script is read relative to the config and compiled at load: its
// errors name the config's line and key, then the script's file and line.
func TestScriptErrorsAtLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("bad.star", "def before_request(req, vars):\n    req.body = nope\n")
	write("good.star", "def after_response(res, vars):\n    vars[\"token\"] = res.body\n")
	probe := func(url, script string) string {
		return "allowed_targets: [\"127.0.0.1\"]\nprobes:\n  - name: p\n    request:\n      url: " + url + "\n      script: " + script + "\n    load: {concurrency: [1]}\n"
	}
	for _, c := range []struct{ in, want string }{
		{probe("http://127.0.0.1/", "bad.star"), "loadprobe.yml:6: probes[0].request.script: " + filepath.Join(dir, "bad.star") + ":2:16: undefined: nope"},
		{probe("http://127.0.0.1/", "missing.star"), "request.script: cannot read " + filepath.Join(dir, "missing.star")},
		{probe("ws://127.0.0.1/", "good.star"), "request.script: a script rewrites HTTP requests"},
	} {
		_, err := Parse(filepath.Join(dir, "loadprobe.yml"), []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	cfg, err := Parse(filepath.Join(dir, "loadprobe.yml"), []byte(probe("http://127.0.0.1/", "good.star")))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Plans()[0]; p.Request.Script == nil || len(p.Vars) != 1 || p.Vars[0] != "token" {
		t.Errorf("script %v, vars %q: want the script and its variable token", p.Request.Script, p.Vars)
	}
}
