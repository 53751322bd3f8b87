package analysis

import (
	"testing"

	"github.com/loadprobe/loadprobe/result"
)

// Every reason an attempt can fail without a response reads as words in
// the diagnosis, closed (WebSocket) included.
func TestEveryNoResponseReasonIsNamed(t *testing.T) {
	for _, o := range result.NoResponseReasons {
		k := failureKind{reason: o.String(), n: 2}
		if k.meaning() == "" || reasonPlurals[o.String()] == "" {
			t.Errorf("reason %s: meaning %q, plural %q; want both", o, k.meaning(), reasonPlurals[o.String()])
		}
	}
}
