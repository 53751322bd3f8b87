package config

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

var errorLine = regexp.MustCompile(`^testdata/fuzz\.yml:[1-9][0-9]*: \S`)

// FuzzParse checks that Parse never panics, that every error it returns
// names the file and a line, and that a config it accepts survives a round
// trip through its redacted YAML (what /config serves) unchanged.
// The seed corpus in testdata/fuzz/FuzzParse holds the good and bad configs
// of testdata and the example.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		// In testdata, so that body_file: payload.json can be read.
		c, err := Parse("testdata/fuzz.yml", data)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a config with an error")
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !errorLine.MatchString(line) {
					t.Fatalf("error line %q does not start with file:line:", line)
				}
			}
			return
		}
		out, err := c.Redacted()
		if err != nil {
			t.Fatalf("Redacted: %v", err)
		}
		// Paths in out are resolved already: relative to the working directory.
		c2, err := Parse("fuzz.yml", out)
		if err != nil {
			t.Fatalf("the redacted config does not parse: %v\n%s", err, out)
		}
		out2, err := c2.Redacted()
		if err != nil {
			t.Fatalf("Redacted: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the config:\n%s\n---\n%s", out, out2)
		}
		for i, p := range c.Plans() {
			p2 := c2.Plans()[i]
			// /config hides an {{env}} action's value: <secret> is the body then.
			if p.Request.Body.Placeholder("1") != p2.Request.Body.Placeholder("1") && !envAction.MatchString(c.Probes[i].Request.Body) {
				t.Fatalf("probe %d: payload changed", i)
			}
			for code := 0; code < 700; code++ {
				if p.Request.ValidCode(code) != p2.Request.ValidCode(code) {
					t.Fatalf("probe %d: ValidCode(%d) changed", i, code)
				}
			}
		}
	})
}
