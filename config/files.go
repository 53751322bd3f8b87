package config

import (
	"sort"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/internal/regularfile"
	"github.com/loadprobe/loadprobe/plan"
)

// maxNamedFileSize bounds a file the client settings name (a CA bundle,
// a key, a password): read once here to prove it can be, as it will be.
const maxNamedFileSize = 4 << 20

// files reads every file the client settings name, so that a missing or
// unreadable one fails --config.check, not the first run.
func (v *validator) files(hc *commoncfg.HTTPClientConfig, p keyPath) {
	type named struct {
		at   keyPath
		name string
	}
	tls := func(at keyPath, t *commoncfg.TLSConfig) []named {
		return []named{{at.to("ca_file"), t.CAFile}, {at.to("cert_file"), t.CertFile}, {at.to("key_file"), t.KeyFile}}
	}
	files := append(tls(p.to("tls_config"), &hc.TLSConfig), named{p.to("bearer_token_file"), hc.BearerTokenFile})
	if a := hc.BasicAuth; a != nil {
		files = append(files, named{p.to("basic_auth", "username_file"), a.UsernameFile}, named{p.to("basic_auth", "password_file"), a.PasswordFile})
	}
	if a := hc.Authorization; a != nil {
		files = append(files, named{p.to("authorization", "credentials_file"), a.CredentialsFile})
	}
	if o := hc.OAuth2; o != nil {
		op := p.to("oauth2")
		files = append(files, named{op.to("client_secret_file"), o.ClientSecretFile}, named{op.to("client_certificate_key_file"), o.ClientCertificateKeyFile})
		files = append(files, tls(op.to("tls_config"), &o.TLSConfig)...)
	}
	if h := hc.HTTPHeaders; h != nil {
		names := make([]string, 0, len(h.Headers))
		for name := range h.Headers {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			for i, f := range h.Headers[name].Files {
				files = append(files, named{p.to("http_headers", name, "files", i), f})
			}
		}
	}
	for _, f := range files {
		if f.name == "" {
			continue
		}
		if _, err := regularfile.Read(f.name, maxNamedFileSize); err != nil {
			v.errorf(f.at, "%v", err)
		}
	}
}

// runLength reports a run longer than its interval: the schedule could
// never keep it. A run is every step (or phase) of the probe and of its
// control, max_steps of each for a search; a continuous probe runs back to
// back on purpose. first indexes the probes by name: a search of the list
// for each probe would make validation quadratic in the number of probes.
func (v *validator) runLength(c *Config, pr *Probe, first map[string]int, p keyPath) {
	if pr.Schedule.Continuous || pr.Schedule.Interval <= 0 {
		return
	}
	run, what := runSeconds(&pr.Load), "a run"
	if j, ok := first[pr.Control]; ok && pr.Control != "" {
		ctl := &c.Probes[j]
		ctlRun := runSeconds(&ctl.Load)
		if s := pr.Load.Search; s != nil {
			// The control of a search runs the levels the search measured.
			ctlRun = float64(s.MaxSteps) * time.Duration(ctl.Load.StepDuration).Seconds()
		}
		run, what = run+ctlRun, "a run with its control"
	}
	if interval := time.Duration(pr.Schedule.Interval); run > interval.Seconds() {
		v.errorf(p, "%s lasts %s, longer than the interval (%s): lengthen the interval or shorten the run",
			what, model.Duration(time.Duration(min(run, 1e9))*time.Second), pr.Schedule.Interval)
	}
}

// runSeconds is how long a run of l lasts, in seconds (as a float: a long
// step times many levels must not overflow).
func runSeconds(l *plan.Load) float64 {
	if len(l.Phases) > 0 {
		var s float64
		for _, ph := range l.Phases {
			s += time.Duration(ph.Duration).Seconds()
		}
		return s
	}
	steps := len(l.Concurrency) + len(l.Rate)
	if l.Search != nil {
		steps = l.Search.MaxSteps // a search measures that many levels at most
	}
	return float64(steps) * time.Duration(l.StepDuration).Seconds()
}
