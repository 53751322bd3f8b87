package config

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// Replicas that read one file share a hash; a byte of difference, even a
// comment, makes another one.
func TestHashIdentifiesTheFile(t *testing.T) {
	const file = "allowed_targets: [127.0.0.1]\nprobes:\n  - name: work\n    request: {url: http://127.0.0.1:8080/}\n    load: {concurrency: [1, 2]}\n"
	parse := func(data string) string {
		t.Helper()
		c, err := Parse("loadprobe.yml", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return c.Hash()
	}
	sum := sha256.Sum256([]byte(file))
	if a, b := parse(file), parse(file); a != b || a != hex.EncodeToString(sum[:8]) {
		t.Errorf("one file: hashes %q and %q, want both the first 16 hex digits of its SHA-256", a, b)
	}
	for _, other := range []string{strings.Replace(file, "[1, 2]", "[1, 3]", 1), file + "# a comment\n"} {
		if parse(other) == parse(file) {
			t.Errorf("%q hashes as %q", other, file)
		}
	}
}
