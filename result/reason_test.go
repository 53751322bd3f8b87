package result

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A reason a target wrote (an error text of megabytes) is kept within a
// few KiB, cut at a character with a mark; a short one is kept whole.
func TestReasonIsBounded(t *testing.T) {
	if got := Reason("connection refused"); got != "connection refused" {
		t.Errorf("Reason of a short text = %q, want it whole", got)
	}
	long := strings.Repeat("é", 3<<20/2) // 3 MiB of two-byte characters
	got := Reason(long)
	if len(got) > MaxReasonBytes || !utf8.ValidString(got) {
		t.Errorf("Reason of 3 MiB: %d bytes (valid UTF-8: %v), want at most %d", len(got), utf8.ValidString(got), MaxReasonBytes)
	}
	if !strings.HasSuffix(got, " bytes cut]") || !strings.Contains(got, "[… 31") {
		t.Errorf("Reason of 3 MiB ends %q, want the mark of the bytes cut", got[len(got)-40:])
	}
}
