package collector

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
)

// A flow's steps count their requests under the step label, beside the
// probe's own series (step=""), and go with the probe when it is forgotten.
func TestStepLive(t *testing.T) {
	reg, _, c := newTest(t)
	l := c.Live("shop")
	l.Attempt(result.HTTPError, result.HTTPStatus(503), 0.001) // caches the probe's own 503 series
	login := l.Step("login")
	if l.Step("login") != login {
		t.Error("Step returned a new recorder for the same step")
	}
	login.Attempt(result.Success, result.HTTPStatus(200), 0.002)
	login.Attempt(result.HTTPError, result.HTTPStatus(503), 0.001)
	l.Step("item").Attempt(result.Timeout, result.Code{}, 0)
	login.InFlight(2) // the probe's gauge
	for _, check := range []struct {
		got, want float64
		what      string
	}{
		{testutil.ToFloat64(c.requests.WithLabelValues("shop", "success", "login")), 1, "login successes"},
		{testutil.ToFloat64(c.responses.WithLabelValues("shop", "503", "login")), 1, "login 503s"},
		{testutil.ToFloat64(c.responses.WithLabelValues("shop", "503", "")), 1, "the probe's own 503s"},
		{testutil.ToFloat64(c.requests.WithLabelValues("shop", "timeout", "item")), 1, "item timeouts"},
		{testutil.ToFloat64(c.requests.WithLabelValues("shop", "success", "")), 0, "the probe's own successes"},
		{testutil.ToFloat64(c.inFlight.WithLabelValues("shop")), 2, "in flight"},
	} {
		if check.got != check.want {
			t.Errorf("%s: %v, want %v", check.what, check.got, check.want)
		}
	}
	if n, _ := testutil.GatherAndCount(reg, "loadprobe_requests_total"); n != 3*int(result.NumOutcomes) {
		t.Errorf("requests_total has %d series, want %d (the probe's and two steps')", n, 3*result.NumOutcomes)
	}
	c.Forget("shop")
	if n, _ := testutil.GatherAndCount(reg, "loadprobe_requests_total"); n != 0 {
		t.Errorf("requests_total keeps %d series of a forgotten probe", n)
	}
	if c.Live("shop").Step("login") == login {
		t.Error("a forgotten probe's step recorder came back")
	}
}

// A declared flow probe exports its steps' request series, each at 0, and
// none of its own (step=""), which would stay 0 forever; a reload that makes
// it a single request brings its own back, counting.
func TestDeclareFlowExportsItsStepsOnly(t *testing.T) {
	reg, _, c := newTest(t)
	flow := &plan.Probe{Name: "shop", Flow: []plan.FlowStep{{Name: "login"}, {Name: "item"}}}
	single := &plan.Probe{Name: "work"}
	for _, p := range []*plan.Probe{flow, single} {
		c.Live(p.Name)
		c.DeclareFlow(p)
	}
	steps := func(probe string) map[string]int {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, f := range families {
			if f.GetName() != "loadprobe_requests_total" && f.GetName() != "loadprobe_request_duration_seconds" {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["probe"] == probe {
					got[labels["step"]]++
				}
			}
		}
		return got
	}
	perStep := int(result.NumOutcomes) + 2 // requests by outcome, durations of success and http_error
	if got := steps("shop"); len(got) != 2 || got["login"] != perStep || got["item"] != perStep {
		t.Errorf("the flow's series by step: %v, want login and item with %d each and no step=\"\"", got, perStep)
	}
	if got := steps("work"); len(got) != 1 || got[""] != perStep {
		t.Errorf("a single request's series by step: %v, want step=\"\" with %d", got, perStep)
	}

	c.DeclareFlow(&plan.Probe{Name: "shop"}) // reloaded as a single request
	c.Live("shop").Attempt(result.Success, result.HTTPStatus(200), 0.001)
	if got := steps("shop"); len(got) != 1 || got[""] != perStep {
		t.Errorf("after the reload, shop's series by step: %v, want step=\"\" only", got)
	}
	if v := testutil.ToFloat64(c.requests.WithLabelValues("shop", "success", "")); v != 1 {
		t.Errorf("after the reload, shop's successes: %v, want 1", v)
	}
}
