package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	argo "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	flagger "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/loadprobe/loadprobe/internal/realpart"
)

// documents decodes each YAML document of file strictly into the type its
// kind names in types.
func documents(t *testing.T, file string, types map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		into, ok := types[meta.APIVersion+"/"+meta.Kind]
		if !ok {
			t.Fatalf("%s holds a %s/%s, which the test does not decode", file, meta.APIVersion, meta.Kind)
		}
		decodeStrict(t, file+" "+meta.Kind, []byte(doc), into)
	}
}

// The rollout gates decode strictly with Flagger's and Argo Rollouts' own
// types: each starts the comparison with a POST to loadprobe's run
// endpoint, and reads its verdict from Prometheus with a query promtool
// accepts (docs/compare.md, "Rollout gates").
func TestRolloutGatesDecodeStrictly(t *testing.T) {
	var template flagger.MetricTemplate
	var canary flagger.Canary
	documents(t, "gates/flagger.yaml", map[string]any{
		"flagger.app/v1beta1/MetricTemplate": &template,
		"flagger.app/v1beta1/Canary":         &canary,
	})
	a := canary.Spec.Analysis
	if a == nil || len(a.Webhooks) != 1 || len(a.Metrics) != 1 {
		t.Fatalf("canary analysis %+v: want one webhook and one metric", a)
	}
	if h := a.Webhooks[0]; h.Type != flagger.PreRolloutHook || h.URL != "http://loadprobe.loadprobe:10471/api/v1/probes/checkout-compare/run" {
		t.Errorf("webhook %+v: want a pre-rollout POST to the compare probe's run endpoint", h)
	}
	if m := a.Metrics[0]; m.TemplateRef == nil || m.TemplateRef.Name != template.Name || m.ThresholdRange == nil || m.ThresholdRange.Max == nil || *m.ThresholdRange.Max != 0 {
		t.Errorf("metric %+v: want the template %s, failing above 0", m, template.Name)
	}

	var analysis argo.AnalysisTemplate
	documents(t, "gates/argo-rollouts.yaml", map[string]any{"argoproj.io/v1alpha1/AnalysisTemplate": &analysis})
	ms := analysis.Spec.Metrics
	if len(ms) != 2 || ms[0].Provider.Job == nil || ms[1].Provider.Prometheus == nil {
		t.Fatalf("metrics %+v: want a Job that starts the comparison, then a Prometheus query", ms)
	}
	if args := strings.Join(ms[0].Provider.Job.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "-X POST http://loadprobe.loadprobe:10471/api/v1/probes/{{args.probe}}/run") {
		t.Errorf("the Job runs %q: want a POST to the probe's run endpoint", args)
	}
	if m := ms[1]; m.SuccessCondition != "result[0] == 0" || m.FailureCondition != "result[0] == 1" || m.FailureLimit == nil || m.FailureLimit.IntValue() != 0 {
		t.Errorf("verdict metric %+v: want a pass on 0, a failure on 1, none allowed", m)
	}

	// Both queries, their templates filled in, are valid PromQL.
	promtool := realpart.Find(t, "promtool", "apt-get install --no-install-recommends prometheus")
	fill := strings.NewReplacer("{{ target }}", "checkout", "{{args.probe}}", "checkout-compare")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: gates\n    rules:\n")
	for i, q := range []string{template.Spec.Query, ms[1].Provider.Prometheus.Query} {
		rules.WriteString("      - record: gate:query" + string(rune('a'+i)) + "\n        expr: |\n")
		for _, line := range strings.Split(strings.TrimSpace(fill.Replace(q)), "\n") {
			rules.WriteString("          " + line + "\n")
		}
	}
	file := filepath.Join(t.TempDir(), "gates.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s\n%s", err, out, rules.String())
	}
}
