package config

import (
	"crypto/sha256"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"golang.org/x/net/http/httpguts"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/regularfile"
	"github.com/loadprobe/loadprobe/plan"
)

// Bounds of a config: beyond them a file is a mistake, and a run or an
// error list would go on for hours or pages.
const (
	maxBodyFileSize = 64 << 20 // body_file: the payload is held in memory
	maxLevels       = 1000     // levels of a ramp, phases of a profile
	maxNameLength   = 128      // probe and phase names
)

// config validates c, and compiles its probes into c.plans: it resolves
// relative paths against dir, reads the files the probes name and
// compiles their templates.
func (v *validator) config(c *Config, dir string) {
	v.globs(c.AllowedTargets)
	if c.MaxConcurrency <= 0 {
		v.errorf(keyPath{"max_concurrency"}, "must be positive (got %d)", c.MaxConcurrency)
	}
	if !(c.MaxRate > 0) || math.IsInf(c.MaxRate, 1) {
		v.errorf(keyPath{"max_rate"}, "must be a positive number (got %s)", num(c.MaxRate))
	}
	if c.MaxParallelRuns <= 0 {
		v.errorf(keyPath{"max_parallel_runs"}, "must be positive (got %d)", c.MaxParallelRuns)
	}

	// An empty probe list is valid: the daemon then serves its own metrics
	// and waits for a reload that adds probes.
	first := map[string]int{}
	c.plans = make([]*plan.Probe, len(c.Probes))
	for i := range c.Probes {
		p := &c.Probes[i]
		pp := keyPath{"probes", i}
		named, compiled := v.probe(c, p, pp, dir)
		c.plans[i] = compiled
		if !named {
			continue
		}
		if j, dup := first[p.Name]; dup {
			v.errorf(pp.to("name"), "duplicate probe name %q (first used by probes[%d])", p.Name, j)
		} else {
			first[p.Name] = i
		}
	}
	v.controls(c, first)
	for i := range c.Probes {
		v.runLength(c, &c.Probes[i], first, keyPath{"probes", i, "schedule", "interval"})
	}
}

// probe validates one probe at pp and compiles it, under c's caps and
// allowlist; relative paths are resolved against dir. It reports whether
// the probe's name is valid, for the checks across probes, and returns its
// plan; nil when it is not valid.
func (v *validator) probe(c *Config, p *Probe, pp keyPath, dir string) (named bool, compiled *plan.Probe) {
	problems := len(v.issues)
	np := pp.to("name")
	switch {
	case p.Name == "":
		v.errorf(np, "required")
	case !validName(p.Name):
		v.errorf(np, "%q is not a valid name: use letters, digits, _ and -", p.Name)
	case len(p.Name) > maxNameLength:
		v.errorf(np, "longer than %d characters", maxNameLength)
	default:
		named = true
	}
	rows, dataSum := v.data(p.Data, pp.to("data"), dir)
	var columns []string
	if rows != nil {
		columns = rows.Columns
	}
	scope := template.Scope{Columns: columns}
	candidate := p.Request // as written: validation rewrites p.Request's body_file and script
	var vars []string
	if p.Flow != nil {
		vars = v.flow(c, p, pp, dir, columns)
	} else {
		parts := v.request(c, &p.Request, pp.to("request"), dir, scope)
		v.grpc(&p.Request, parts, pp.to("request"), dir, scope)
		if parts.script != nil {
			vars = parts.script.Vars()
		}
	}
	v.compare(c, p, candidate, pp.to("compare"), dir, scope)
	v.load(c, &p.Load, pp.to("load"))
	v.webSocket(p, pp)
	v.grpcStream(p, pp)
	v.rules(&p.Rules, pp.to("rules"))
	v.abort(&p.Abort, pp.to("abort"))
	guardPrometheus(p)
	v.guard(c, p, pp.to("guard"), dir)
	v.telemetry(c, p, pp.to("telemetry"), dir)
	v.expect(&p.Expect, pp.to("expect"))
	v.schedule(p, pp.to("schedule"))
	if len(v.issues) == problems {
		compiled = v.compile(p, pp, rows, dataSum, vars)
	}
	return named, compiled
}

// controls checks each probe's control, once every name is known.
func (v *validator) controls(c *Config, first map[string]int) {
	for i, p := range c.Probes {
		if p.Control == "" {
			continue
		}
		cp := keyPath{"probes", i, "control"}
		j, ok := first[p.Control]
		switch {
		case p.Control == p.Name:
			v.errorf(cp, "a probe cannot be its own control")
		case !ok:
			v.errorf(cp, "no probe is named %q", p.Control)
		case c.Probes[j].Control != "":
			v.errorf(cp, "probe %q has a control of its own (%q): controls do not chain", p.Control, c.Probes[j].Control)
		case c.Probes[j].Load.Mode() != p.Load.Mode():
			// The generator check compares the two ramps level by level.
			v.errorf(cp, "probe %q runs a %s load; a control must run the same kind of load as the probe (%s)",
				p.Control, c.Probes[j].Load.Mode(), p.Load.Mode())
		}
	}
}

// maxStreamsPerConnection bounds http2.streams_per_connection: servers
// allow 100 to 250 concurrent streams (nginx 128, Go 250).
const maxStreamsPerConnection = 1000

// request checks r at p and reads its body_file, compiles its templates
// (template.go) into parts, which it returns.
func (v *validator) request(c *Config, r *Request, p keyPath, dir string, scope template.Scope) *requestParts {
	parts := &requestParts{patterns: map[string]*regexp.Regexp{}, slots: map[string]int{}}
	v.parts[r] = parts
	switch {
	case r.Body != "" && r.BodyFile != "":
		v.errorf(p.to("body_file"), "body and body_file are exclusive")
	case r.BodyFile != "":
		r.BodyFile = commoncfg.JoinDir(dir, r.BodyFile)
		payload, err := regularfile.Read(r.BodyFile, maxBodyFileSize)
		if err != nil {
			v.errorf(p.to("body_file"), "%v", err)
			break
		}
		parts.payload, parts.sum = payload, sha256.Sum256(payload)
	case r.Body != "":
		parts.payload = []byte(r.Body)
	}
	if r.Script != "" {
		parts.script = v.script(r, parts, p.to("script"), dir)
	}

	// The checks below see the request as templates write it (template.go).
	checked := v.templates(r, parts, p, scope)
	if r.URL == "" {
		v.errorf(p.to("url"), "required")
	} else {
		v.url(c, checked.URL, p.to("url"))
	}

	if r.Method == "" {
		v.errorf(p.to("method"), "required")
	} else if !httpguts.ValidHeaderFieldName(r.Method) { // a method is a token, as a header name is
		v.errorf(p.to("method"), "%q is not a valid HTTP method", r.Method)
	}

	names := make([]string, 0, len(r.Headers))
	for name := range r.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	hp := p.to("headers")
	for _, name := range names {
		if !httpguts.ValidHeaderFieldName(name) {
			v.errorAt(hp, hp.to(name), "%q is not a valid header name", name)
		} else if !httpguts.ValidHeaderFieldValue(checked.Headers[name]) {
			v.errorAt(hp, hp.to(name), "the value of %s holds a control character", name)
		}
	}

	if r.Timeout <= 0 {
		v.errorf(p.to("timeout"), "must be positive (got %s)", r.Timeout)
	}

	if n := r.HTTP2.StreamsPerConnection; n < 1 || n > maxStreamsPerConnection {
		v.errorf(p.to("http2", "streams_per_connection"), "must be in [1, %d] (got %d)", maxStreamsPerConnection, n)
	}

	cp := p.to("valid_status_codes")
	for i, code := range r.ValidStatusCodes {
		if code < 100 || code > 599 {
			v.errorAt(cp, cp.to(i), "%d is not an HTTP status code (100-599)", code)
		}
	}

	v.clientConfig(&r.HTTPClientConfig, p, dir)
	v.clientHosts(c, checked, p)
	v.http3(r, checked.URL, p)
	return parts
}

// clientConfig checks prometheus/common's client settings inlined at p,
// with relative file names resolved against dir.
func (v *validator) clientConfig(hc *commoncfg.HTTPClientConfig, p keyPath, dir string) {
	if dir != "" { // Compile's probe: its paths are the working directory's
		hc.SetDirectory(dir)
	}
	v.files(hc, p) // before Validate, which moves bearer_token_file into authorization
	if err := hc.Validate(); err != nil {
		v.errorf(p, "%v", err)
	} else if err := hc.TLSConfig.Validate(); err != nil {
		v.errorf(p.to("tls_config"), "%v", err)
	}
}

func (v *validator) load(c *Config, l *plan.Load, p keyPath) {
	var kinds []string
	if l.Concurrency != nil {
		kinds = append(kinds, string(plan.ModeConcurrency))
	}
	if l.Rate != nil {
		kinds = append(kinds, string(plan.ModeRate))
	}
	if l.Phases != nil {
		kinds = append(kinds, string(plan.ModePhases))
	}
	if l.Search != nil {
		kinds = append(kinds, string(plan.ModeSearch))
	}
	switch len(kinds) {
	case 0:
		if !v.undecoded(p.to("concurrency"), p.to("rate"), p.to("phases"), p.to("search")) {
			v.errorf(p, "one of concurrency, rate, phases or search is required")
		}
	case 1:
	default:
		v.errorAt(p, p.to(kinds[1]), "only one of concurrency, rate, phases and search may be set (got %s)", strings.Join(kinds, " and "))
	}

	if l.Concurrency != nil {
		checkLevels(v, p.to("concurrency"), l.Concurrency, c.MaxConcurrency, "max_concurrency", strconv.Itoa)
	}
	if l.Rate != nil {
		checkLevels(v, p.to("rate"), l.Rate, c.MaxRate, "max_rate", num)
	}
	if l.Phases != nil {
		v.phases(c, l.Phases, p.to("phases"))
	}
	if l.Search != nil {
		v.search(c, l.Search, p.to("search"))
	}

	v.positive(p.to("step_duration"), l.StepDuration)
	if l.Warmup < 0 {
		v.errorf(p.to("warmup"), "must not be negative (got %s)", l.Warmup)
	} else if l.StepDuration > 0 && l.Warmup >= l.StepDuration {
		v.errorf(p.to("warmup"), "must be shorter than step_duration (%s)", l.StepDuration)
	} else {
		for _, ph := range l.Phases {
			if ph.Duration > 0 && l.Warmup >= ph.Duration {
				v.errorf(p.to("warmup"), "must be shorter than every phase (%q lasts %s)", ph.Name, ph.Duration)
				break
			}
		}
	}
	if l.MaxInFlight <= 0 {
		v.errorf(p.to("max_in_flight"), "must be positive (got %d)", l.MaxInFlight)
	}
	v.positive(p.to("settle_timeout"), l.SettleTimeout)
}

// phases checks an open-loop profile.
func (v *validator) phases(c *Config, phases []plan.Phase, p keyPath) {
	if len(phases) == 0 {
		v.errorf(p, "at least one phase is required")
	} else if len(phases) > maxLevels {
		v.errorf(p, "%d phases, more than %d", len(phases), maxLevels)
		return
	}
	names := map[string]int{}
	for i, ph := range phases {
		ip := p.to(i)
		if ph.Name == "" {
			v.errorf(ip.to("name"), "required")
		} else if len(ph.Name) > maxNameLength {
			v.errorf(ip.to("name"), "longer than %d characters", maxNameLength)
		} else if j, dup := names[ph.Name]; dup {
			v.errorf(ip.to("name"), "duplicate phase name %q (first used by phases[%d])", ph.Name, j)
		} else {
			names[ph.Name] = i
		}
		if ph.Duration <= 0 {
			v.errorf(ip.to("duration"), "must be positive (got %s)", ph.Duration)
		}
		if !(ph.Rate > 0) {
			v.errorf(ip.to("rate"), "must be positive (got %s)", num(ph.Rate))
		} else if ph.Rate > c.MaxRate {
			v.errorf(ip.to("rate"), "%s is above max_rate (%s)", num(ph.Rate), num(c.MaxRate))
		}
		if ph.RampTo != nil {
			if x := *ph.RampTo; !(x >= 0) {
				v.errorf(ip.to("ramp_to"), "must not be negative (got %s)", num(x))
			} else if x > c.MaxRate {
				v.errorf(ip.to("ramp_to"), "%s is above max_rate (%s)", num(x), num(c.MaxRate))
			}
		}
	}
}

func (v *validator) rules(r *plan.Rules, p keyPath) {
	if !(r.KneeFraction > 0 && r.KneeFraction <= 1) {
		v.errorf(p.to("knee_fraction"), "must be in (0, 1] (got %s)", num(r.KneeFraction))
	}
	if !(r.LatencyQuantile > 0 && r.LatencyQuantile < 1) {
		v.errorf(p.to("latency_quantile"), "must be in (0, 1) (got %s)", num(r.LatencyQuantile))
	}
	v.positive(p.to("latency_budget"), r.LatencyBudget)
	if !(r.ErrorRatioBudget >= 0 && r.ErrorRatioBudget < 1) {
		v.errorf(p.to("error_ratio_budget"), "must be in [0, 1) (got %s)", num(r.ErrorRatioBudget))
	}
	if !(r.GeneratorCPUBudget > 0 && r.GeneratorCPUBudget <= 1) {
		v.errorf(p.to("generator_cpu_budget"), "must be in (0, 1] (got %s)", num(r.GeneratorCPUBudget))
	}
}

func (v *validator) expect(e *plan.Expect, p keyPath) {
	if x := e.MinCapacity; !(x >= 0) || math.IsInf(x, 1) {
		v.errorf(p.to("min_capacity"), "must be a non-negative number (got %s)", num(x))
	}
	if e.MaxP99 < 0 {
		v.errorf(p.to("max_p99"), "must not be negative (got %s)", e.MaxP99)
	}
	if x := e.MaxErrorRatio; x != nil && !(*x >= 0 && *x < 1) {
		v.errorf(p.to("max_error_ratio"), "must be in [0, 1) (got %s)", num(*x))
	}
}

func (v *validator) abort(a *plan.Abort, p keyPath) {
	if !(a.ErrorRatio > 0 && a.ErrorRatio <= 1) {
		v.errorf(p.to("error_ratio"), "must be in (0, 1] (got %s)", num(a.ErrorRatio))
	}
}

func (v *validator) schedule(pr *Probe, p keyPath) {
	s := &pr.Schedule
	v.positive(p.to("interval"), s.Interval)
	if s.Jitter < 0 {
		v.errorf(p.to("jitter"), "must not be negative (got %s)", s.Jitter)
	} else if s.Interval > 0 && s.Jitter >= s.Interval {
		v.errorf(p.to("jitter"), "must be shorter than interval (%s)", s.Interval)
	}
	// A continuous probe is a canary: a fixed load run back to back, whose
	// steps all measure the same thing. A ramp run back to back would hammer
	// the target at its breaking point around the clock, so only a single
	// level (rate: [N] or concurrency: [N]) may run continuously.
	if s.Continuous {
		cp := p.to("continuous")
		l := &pr.Load
		switch {
		case l.Phases != nil:
			v.errorf(cp, "a continuous probe runs a fixed load (rate: [N] or concurrency: [N]), not phases")
		case len(l.Concurrency) > 1:
			v.errorf(cp, "a continuous probe runs a fixed load (concurrency: [N]), not a ramp of %d levels", len(l.Concurrency))
		case len(l.Rate) > 1:
			v.errorf(cp, "a continuous probe runs a fixed load (rate: [N]), not a ramp of %d levels", len(l.Rate))
		case l.Search != nil:
			v.errorf(cp, "a continuous probe runs a fixed load (rate: [N] or concurrency: [N]), not a search")
		}
	}
}

// uniqueName checks the name of item i of a list, which becomes a label
// value: valid, bounded, and not taken by an earlier item (names holds
// the index of each name taken).
func (v *validator) uniqueName(p keyPath, what, name string, names map[string]int, list string, i int) {
	switch j, dup := names[name]; {
	case !validName(name):
		v.errorf(p, "%q is not a valid %s name: use letters, digits, _ and -", name, what)
	case len(name) > maxNameLength:
		v.errorf(p, "longer than %d characters", maxNameLength)
	case dup:
		v.errorf(p, "duplicate %s name %q (first used by %s[%d])", what, name, list, j)
	default:
		names[name] = i
	}
}

func (v *validator) positive(p keyPath, d model.Duration) {
	if d <= 0 {
		v.errorf(p, "must be positive (got %s)", d)
	}
}

func validName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// checkLevels checks a ramp's levels: at least one, each positive, each
// above the last, none above the cap (ignored when the cap itself is not
// positive: that is reported on its own). show formats a level.
func checkLevels[T int | float64](v *validator, lp keyPath, levels []T, limit T, limitName string, show func(T) string) {
	if len(levels) == 0 {
		v.errorf(lp, "at least one level is required")
	} else if len(levels) > maxLevels {
		v.errorf(lp, "%d levels, more than %d", len(levels), maxLevels)
		return
	}
	for i, x := range levels {
		at := lp.to(i)
		switch {
		case !(x > 0):
			v.errorAt(lp, at, "levels must be positive (got %s)", show(x))
		case i > 0 && !(x > levels[i-1]):
			v.errorAt(lp, at, "levels must increase (got %s after %s)", show(x), show(levels[i-1]))
		}
		if x > limit && limit > 0 {
			v.errorAt(lp, at, "level %s is above %s (%s)", show(x), limitName, show(limit))
		}
	}
}

// num formats a number as YAML would write it.
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return ".nan"
	case math.IsInf(x, 1):
		return ".inf"
	case math.IsInf(x, -1):
		return "-.inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
