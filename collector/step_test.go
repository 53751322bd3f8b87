package collector

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadprobe/loadprobe/result"
)

// A flow's steps count their requests under the step label, beside the
// probe's own series (step=""), and go with the probe when it is forgotten.
func TestStepLive(t *testing.T) {
	reg, _, c := newTest(t)
	l := c.Live("shop")
	l.Attempt(result.HTTPError, 503, 0.001) // caches the probe's own 503 series
	login := l.Step("login")
	if l.Step("login") != login {
		t.Error("Step returned a new recorder for the same step")
	}
	login.Attempt(result.Success, 200, 0.002)
	login.Attempt(result.HTTPError, 503, 0.001)
	l.Step("item").Attempt(result.Timeout, 0, 0)
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
