package config

import (
	"fmt"
	"math"
	"strconv"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
)

// search checks a load's search section (docs/search.md): one axis, a range
// within the caps, a precision and a step budget that can end a run.
func (v *validator) search(c *Config, s *plan.Search, p keyPath) {
	s.Line = v.lineOf(p)
	switch {
	case s.Concurrency == nil && s.Rate == nil:
		v.errorf(p, "one of concurrency or rate is required: the axis the search moves along")
	case s.Concurrency != nil && s.Rate != nil:
		v.errorf(p.to("rate"), "only one of concurrency and rate may be set: a search moves along one axis")
	case s.Concurrency != nil:
		v.searchRange(*s.Concurrency, p.to("concurrency"), float64(c.MaxConcurrency), "max_concurrency", true)
	default:
		v.searchRange(*s.Rate, p.to("rate"), c.MaxRate, "max_rate", false)
	}
	if !(s.Precision > 0 && s.Precision < 1) {
		v.errorf(p.to("precision"), "must be in (0, 1): the bracket's width as a fraction of its level (got %s)", num(s.Precision))
	}
	if s.MaxSteps < 1 || s.MaxSteps > maxLevels {
		v.errorf(p.to("max_steps"), "must be between 1 and %d (got %d)", maxLevels, s.MaxSteps)
	}
}

// searchRange checks from and max: positive, from at most max, max within
// the cap, whole numbers of connections on the closed-loop axis.
func (v *validator) searchRange(r plan.SearchRange, p keyPath, limit float64, limitName string, whole bool) {
	show := num
	if whole {
		show = func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	}
	for _, end := range []struct {
		key string
		x   float64
	}{{"from", r.From}, {"max", r.Max}} {
		at := p.to(end.key)
		switch {
		case !(end.x > 0) || math.IsInf(end.x, 1):
			v.errorf(at, "must be a positive number (got %s)", show(end.x))
		case whole && end.x != math.Trunc(end.x):
			v.errorf(at, "must be a whole number of connections (got %s)", show(end.x))
		case end.x > limit && limit > 0:
			v.errorf(at, "%s is above %s (%s)", show(end.x), limitName, show(limit))
		}
	}
	if r.From > r.Max {
		v.errorf(p.to("max"), "must be at least from (%s), got %s", show(r.From), show(r.Max))
	}
}

// CheckShard reports the probes of c that shard cannot run: a fleet
// (--shard i/N with N > 1) searches by reading every shard's steps from
// the fleet's Prometheus after each step (docs/fleet.md, "Fleet search"),
// so a replica that cannot read it (readsFleet false: no
// --fleet.prometheus-url) cannot search. file names the config in the
// error, "file:line: path: message" as load errors read.
func (c *Config) CheckShard(file string, shard fleet.Shard, readsFleet bool) error {
	if shard.Replicas() <= 1 || readsFleet {
		return nil
	}
	for i, p := range c.Probes {
		if s := p.Load.Search; s != nil {
			return &lineError{File: file, Line: s.Line, Path: fmt.Sprintf("probes[%d].load.search", i),
				Msg: fmt.Sprintf("a fleet (--shard %s) searches by reading every shard's steps from the fleet's Prometheus, and this replica has no --fleet.prometheus-url; give it one, give probe %q a concurrency or rate ramp, or run it on one loadprobe", shard, p.Name)}
		}
	}
	return nil
}
