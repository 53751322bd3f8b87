package wire

import "time"

// Deadline is the deadline set on a connection, moved only when an
// operation's own deadline passes it (docs/measurement.md, "Deadlines
// kept within a millisecond"): setting one costs a timer's update and a
// read of the clock, and the requests a connection carries within
// DeadlineSlack of each other then share one.
type Deadline struct{ set time.Time }

// DeadlineSlack is how much later than its own deadline an operation on a
// connection may give up.
const DeadlineSlack = time.Millisecond

// Move returns the deadline to set for an operation due by due, and true;
// or false when the one set already serves: no earlier than due, and no
// more than DeadlineSlack later. A zero due (none) is always set.
func (d *Deadline) Move(due time.Time) (time.Time, bool) {
	switch {
	case due.IsZero():
		d.set = due
	case d.set.Before(due) || d.set.Sub(due) > DeadlineSlack:
		d.set = due.Add(DeadlineSlack)
	default:
		return d.set, false
	}
	return d.set, true
}

// Forget notes that no deadline is known to be set: the connection is
// new or gone.
func (d *Deadline) Forget() { d.set = time.Time{} }
