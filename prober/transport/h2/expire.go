package h2

import (
	"os"
	"time"

	"golang.org/x/net/http2"
)

// A connection ends its streams at their deadlines with one timer, set
// for the earliest deadline of the streams open: a timer for each stream
// cost an update and a stop per request, and a select to wait on it. The
// requests of a probe share one timeout, so the stream that set the timer
// has most often ended by the time it fires; the timer is then set again
// for the earliest deadline left, once in each timeout.

// expireByLocked makes the connection's timer fire by deadline.
func (c *Conn) expireByLocked(deadline time.Time) {
	if c.expireAt.IsZero() || deadline.Before(c.expireAt) {
		c.expireAt = deadline
		c.expiry.Reset(time.Until(deadline))
	}
}

// expire ends the streams whose deadline has passed, resetting them, and
// sets the timer for the earliest deadline of the others.
func (c *Conn) expire() {
	c.mu.Lock()
	now := time.Now()
	c.expireAt = time.Time{}
	var late []uint32
	var next time.Time
	for id, s := range c.streams {
		switch {
		case !now.Before(s.deadline):
			late = append(late, id)
			c.finishLocked(s, os.ErrDeadlineExceeded)
		case next.IsZero() || s.deadline.Before(next):
			next = s.deadline
		}
	}
	if !next.IsZero() {
		c.expireByLocked(next)
	}
	c.mu.Unlock()
	if len(late) > 0 {
		c.control(func(fr *http2.Framer) error {
			for _, id := range late {
				if err := fr.WriteRSTStream(id, http2.ErrCodeCancel); err != nil {
					return err
				}
			}
			return nil
		})
	}
}
