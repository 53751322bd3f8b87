package prober

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// fullTimes are the spans of a stage during which all max_in_flight
// senders were busy, as times since the stage start: a request due in one
// is dropped. A sender that frees up after such a span may send an overdue
// request that fell due just before it (the generator was late, not full)
// and so start the next span at once, while requests of the last span
// still wait to be claimed: the spans are kept until every request due in
// them has been. An overloaded generator begins and ends a span at almost
// every request, so the spans are searched, never scanned, and those done
// with are let go in bulk.
type fullTimes struct {
	mu    sync.Mutex
	spans []fullSpan // by from; spans[:head] are done with
	head  int
	any   atomic.Bool // a span was ever begun: only then is mu taken
}

type fullSpan struct{ from, until time.Duration } // until: open while 0

// begin opens a span at at; unclaimed is when the first request nobody
// has claimed yet is due.
func (f *fullTimes) begin(at, unclaimed time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.any.Store(true)
	for f.head < len(f.spans) && f.spans[f.head].until != 0 && f.spans[f.head].until <= unclaimed {
		f.head++
	}
	if f.head > len(f.spans)/2 {
		n := copy(f.spans, f.spans[f.head:])
		f.spans, f.head = f.spans[:n], 0
	}
	f.spans = append(f.spans, fullSpan{from: at})
}

func (f *fullTimes) end(at time.Duration) {
	f.mu.Lock()
	if n := len(f.spans); n > f.head && f.spans[n-1].until == 0 {
		f.spans[n-1].until = at
	}
	f.mu.Unlock()
}

// covering reports whether due fell in a span that has ended, and when that
// span ended: every request due before then is dropped too. Only a sender
// that is not busy asks, so the span under way, if any, began after due.
func (f *fullTimes) covering(due time.Duration) (until time.Duration, held bool) {
	if !f.any.Load() {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.spans[f.head:]
	i := sort.Search(len(kept), func(i int) bool { return kept[i].from > due }) - 1
	if i < 0 {
		return 0, false
	}
	sp := kept[i]
	return sp.until, sp.until != 0 && due < sp.until
}
