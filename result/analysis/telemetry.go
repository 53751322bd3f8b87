package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// lowHeadroom is the headroom below which the target could not take half
// again its live peak: the threshold of LoadprobeHeadroomLow.
const lowHeadroom = 1.5

// Readings are what a probe's telemetry read after its run
// (docs/telemetry.md).
type Readings struct {
	Resources []plan.Resource
	// Saturation is each resource's value over each step, in the order
	// the steps ran; SaturationErr says what could not be read.
	Saturation    []map[string]float64
	SaturationErr error
	// Live is the live traffic (its Ratio and Capacity left to Explain);
	// nil when unread, and TrafficErr says why.
	Live       *result.Headroom
	TrafficErr error
	Traffic    bool // the probe reads traffic
	Window     model.Duration
}

// Explain adds to r, which Analyze filled, what its telemetry read: each
// step's saturation, the bottleneck and the headroom, each with the
// diagnosis line that says it.
func Explain(r *result.Result, rd Readings) {
	for i, sat := range rd.Saturation {
		if i < len(r.Steps) && len(sat) > 0 {
			r.Steps[i].Saturation = sat
		}
	}
	a := &analysis{r: r}
	add := func(s string) {
		if s != "" {
			r.Diagnosis = append(r.Diagnosis, s)
		}
	}
	if len(rd.Resources) > 0 {
		add(a.bottleneck(rd.Resources))
		if rd.SaturationErr != nil {
			add("saturation not read in full: " + result.Reason(rd.SaturationErr.Error()))
		}
	}
	if rd.Traffic {
		add(a.headroom(rd))
	}
}

// bottleneck sets r.Bottleneck to the first resource at or above its max,
// by level up to the knee's (else the first failure's), in the order
// declared at a level, and says so; without either breaking point, or for
// phases, there is nothing to explain.
func (a *analysis) bottleneck(resources []plan.Resource) string {
	r := a.r
	r.Bottleneck = nil
	limit, rule := r.BreakingPoints.Knee, "the knee"
	if limit == nil {
		limit, rule = r.BreakingPoints.FirstFailure, "the first failure"
	}
	if limit == nil || r.Mode == plan.ModePhases {
		return "" // a profile's phases are not ordered by level
	}
	steps := ByLevel(r.Mode, r.Whole())
	var highest struct {
		step  result.Step
		res   plan.Resource
		share float64
	}
	for _, s := range steps {
		if s.Level > limit.Level {
			break
		}
		for _, res := range resources {
			v, ok := s.Saturation[res.Name]
			if !ok {
				continue
			}
			if v >= res.Max {
				r.Bottleneck = &result.Bottleneck{Resource: res.Name, Level: s.Level, Value: v}
				return fmt.Sprintf("bottleneck: %s at its limit from %s (%s, max %s), the first declared resource to reach it at or below %s (%s)",
					res.Name, a.levelText(s), fmtNum(v), fmtNum(res.Max), rule, a.levelText(result.Step{Level: limit.Level}))
			}
			if res.Max > 0 && v/res.Max > highest.share {
				highest.step, highest.res, highest.share = s, res, v/res.Max
			}
		}
	}
	names := make([]string, len(resources))
	for i, res := range resources {
		names[i] = res.Name
	}
	line := fmt.Sprintf("no declared resource (%s) reached its limit at or below %s (%s): none explains it",
		strings.Join(names, ", "), rule, a.levelText(result.Step{Level: limit.Level}))
	if highest.share > 0 {
		line += fmt.Sprintf("; the nearest, %s, read %s of max %s %s", highest.res.Name,
			fmtNum(highest.step.Saturation[highest.res.Name]), fmtNum(highest.res.Max), a.at(highest.step))
	}
	return line
}

// headroom sets r.Headroom from the live traffic and the capacity, and
// says it, or why it is unknown.
func (a *analysis) headroom(rd Readings) string {
	r := a.r
	r.Headroom = nil
	window := windowText(rd.Window)
	switch {
	case rd.Live == nil:
		return "headroom unknown: the traffic query: " + result.Reason(fmt.Sprint(rd.TrafficErr))
	case r.Capacity == nil:
		return "headroom unknown: no level was within the budgets, no capacity to set against the live traffic"
	case rd.Live.LivePeak <= 0:
		return fmt.Sprintf("headroom unknown: no live traffic over the last %s to set the capacity against", window)
	}
	h := *rd.Live
	h.Capacity, h.Window = r.Capacity.Throughput, window
	h.Ratio = h.Capacity / h.LivePeak
	r.Headroom = &h
	line := fmt.Sprintf("headroom %s×: capacity %s/s against a live peak of %s/s over the last %s (%s/s now)",
		fmtNum(h.Ratio), fmtNum(h.Capacity), fmtNum(h.LivePeak), window, fmtNum(h.LiveNow))
	switch {
	case h.Ratio < 1:
		line += ": the live peak is above the capacity measured"
	case h.Ratio < lowHeadroom:
		line += fmt.Sprintf(": below %s×, half again the live peak would not fit", fmtNum(lowHeadroom))
	}
	return line
}

// windowText writes a window of whole days in days, as peak windows are
// written ("7d", not Prometheus's "1w").
func windowText(d model.Duration) string {
	const day = model.Duration(24 * time.Hour)
	if d > 0 && d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}
