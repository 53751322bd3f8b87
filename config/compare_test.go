package config

import (
	"testing"
)

// compareYAML is a probe config with compare as its compare section.
func compareYAML(url, load, compare string) string {
	return `allowed_targets: ["127.0.0.1", "canary.local"]
probes:
  - name: work
    request:
      url: ` + url + `
    load: ` + load + `
    compare:
` + compare
}

func TestCompareBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, url, load, compare, want string
	}{
		{"not allowed", "http://127.0.0.1:8080/work", "{concurrency: [1, 2]}", "      candidate: http://10.0.0.1:8080\n",
			`c.yml:8: probes[0].compare.candidate.url: host "10.0.0.1" is not in allowed_targets`},
		{"a path", "http://127.0.0.1:8080/work", "{concurrency: [1, 2]}", "      candidate: http://canary.local:8080/work\n",
			`c.yml:8: probes[0].compare.candidate: "http://canary.local:8080/work" is not a scheme://host:port: the rest of the request is the baseline's`},
		{"another scheme", "http://127.0.0.1:8080/work", "{concurrency: [1, 2]}", "      candidate: https://canary.local:8443\n",
			`c.yml:8: probes[0].compare.candidate: "https://canary.local:8443": the candidate speaks the baseline's scheme (http)`},
		{"no candidate", "http://127.0.0.1:8080/work", "{concurrency: [1, 2]}", "      max_loss: 0.1\n",
			"c.yml:7: probes[0].compare.candidate: required: the candidate's scheme://host:port"},
		{"phases", "http://127.0.0.1:8080/work", "{phases: [{name: a, duration: 1s, rate: 1}]}", "      candidate: http://canary.local:8080\n",
			"c.yml:7: probes[0].compare: a profile or a continuous load has no capacity to compare: compare a ramp or a search"},
		{"confidence", "http://127.0.0.1:8080/work", "{concurrency: [1, 2]}", "      candidate: http://canary.local:8080\n      confidence: 1\n",
			"c.yml:9: probes[0].compare.confidence: must be in (0, 1) (got 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yml", []byte(compareYAML(tc.url, tc.load, tc.compare)))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// The candidate's request is the baseline's with the candidate's origin:
// its path, query, method and headers stay.
func TestCompareBuildsTheCandidate(t *testing.T) {
	c, err := Parse("c.yml", []byte(compareYAML(`"http://127.0.0.1:8080/items/{{index}}?x=1"`, "{concurrency: [1, 2]}",
		"      candidate: http://canary.local:9090\n      max_loss: 0.1\n")))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Plan("work")
	if p.Compare == nil || p.Compare.MaxLoss != 0.1 || p.Compare.Confidence != 0.95 || p.Compare.MaxLatencyGain != 0.1 {
		t.Fatalf("compare %+v: want max_loss 0.1 and the defaults", p.Compare)
	}
	if got := p.Candidate.URL.String(); p.Candidate.URL.Host != "canary.local:9090" || p.Candidate.Method != p.Request.Method || !p.Candidate.Templated {
		t.Errorf("candidate %s (%s, templated %v), want the baseline's request on canary.local:9090", got, p.Candidate.Method, p.Candidate.Templated)
	}
}
