//go:build !linux

package prober

// newTicker has no timerfd to offer outside Linux (ticker_linux.go): the
// event loops tick on the Go runtime's timers.
func newTicker(bool) ticker { return nil }
