package schedule

import (
	"math"
	"time"

	"github.com/loadprobe/loadprobe/result"
)

// summaryEvery is how often a continuous probe's runs are summed up in one
// line at info: a canary runs back to back, every few seconds, and a line
// per run would bury everything else the daemon says (docs/commands.md,
// "Logs").
const summaryEvery = time.Minute

// runTally sums up a continuous probe's runs since its last summary line.
// The probe's loop alone uses it.
type runTally struct {
	since       time.Time // start of the tally; zero before the first run
	runs, valid int
}

// logRun logs the end of l's run r: at info for a scheduled run, at debug
// for a continuous probe's, whose runs a line at info sums up once a minute.
func (s *Scheduler) logRun(l *probeLoop, r result.Result, now time.Time) {
	duration := time.Duration(r.DurationSeconds * float64(time.Second)).Round(time.Millisecond)
	if !l.probe.Schedule.Continuous {
		s.logger.Info("Run ended", "probe", r.Name, "result", r.Ended, "duration", duration)
		return
	}
	s.logger.Debug("Run ended", "probe", r.Name, "result", r.Ended, "duration", duration)
	t := &l.tally
	if t.since.IsZero() {
		t.since = r.Started
	}
	t.runs++
	if r.Valid {
		t.valid++
	}
	if now.Sub(t.since) < summaryEvery {
		return
	}
	attrs := []any{"probe", r.Name, "runs", t.runs, "valid", t.valid, "last_result", r.Ended}
	// Figures as numbers, in requests per second, for whoever parses the log.
	if c := r.Capacity; c != nil {
		attrs = append(attrs, "last_capacity", round2(c.Throughput))
	}
	if n := len(r.Steps); n > 0 {
		attrs = append(attrs, "last_goodput", round2(r.Steps[n-1].Goodput))
	}
	s.logger.Info("Continuous runs", append(attrs, "over", now.Sub(t.since).Round(time.Second))...)
	*t = runTally{since: now}
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
