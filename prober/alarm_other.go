//go:build !linux

package prober

import "time"

// alarm is Linux's timerfd (alarm_linux.go); elsewhere sleeps have the Go
// runtime's own precision.
type alarm struct{}

func newAlarm() *alarm                          { return nil }
func (a *alarm) every(time.Time, time.Duration) {}
func (a *alarm) close()                         {}
