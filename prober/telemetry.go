package prober

import (
	"context"
	"time"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/result/analysis"
	"github.com/loadprobe/loadprobe/telemetry"
)

// telemetryTimeout bounds the reads of a run's telemetry, all of them: a
// Prometheus that does not answer delays the run's result by no more.
const telemetryTimeout = 10 * time.Second

// readTelemetry reads, for a run that measured steps and was not
// canceled, the saturation of the target's resources over each step's
// measured window and its live traffic, and explains them in r
// (docs/telemetry.md). A replica of a fleet reads no traffic: its
// capacity is its share of the fleet's.
func (e *engine) readTelemetry(r *result.Result) {
	t := e.probe.Telemetry
	if t == nil || len(r.Steps) == 0 || r.Ended == result.ResultCanceled {
		return
	}
	rd := analysis.Readings{Resources: t.Saturation, Traffic: t.Traffic != "" && e.opts.Shard.Replicas() == 1, Window: t.PeakWindow}
	reader, err := telemetry.NewReader(t)
	if err != nil {
		rd.SaturationErr, rd.TrafficErr = err, err
		analysis.Explain(r, rd)
		return
	}
	defer reader.Close()
	// An aborted run's context has ended: its readings are still wanted.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), telemetryTimeout)
	defer cancel()
	if len(t.Saturation) > 0 {
		windows := make([]telemetry.Window, len(r.Steps))
		warmup := time.Duration(e.probe.Load.Warmup)
		for i, s := range r.Steps {
			from := s.Started.Add(warmup)
			windows[i] = telemetry.Window{From: from, To: from.Add(time.Duration(s.DurationSeconds * float64(time.Second)))}
		}
		rd.Saturation, rd.SaturationErr = reader.Saturation(ctx, windows)
	}
	if rd.Traffic {
		if live, err := reader.Traffic(ctx, time.Now()); err != nil {
			rd.TrafficErr = err
		} else {
			rd.Live = &result.Headroom{LivePeak: live.Peak, LiveNow: live.Now}
		}
	}
	analysis.Explain(r, rd)
}
