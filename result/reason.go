package result

import (
	"fmt"
	"unicode/utf8"
)

// MaxReasonBytes bounds a run's reason (Error): it may quote what a target
// chose to answer, and the result is served and stored after every run.
const MaxReasonBytes = 4 << 10

// Reason is text to keep as a run's reason, cut within MaxReasonBytes at a
// character's boundary, with a mark saying how much was left out.
func Reason(text string) string {
	if len(text) <= MaxReasonBytes {
		return text
	}
	const mark = " [… %d bytes cut]"
	cut := MaxReasonBytes - len(mark) - 10
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf(mark, len(text)-cut)
}
