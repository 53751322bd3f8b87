package deploy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/loadprobe/loadprobe/config"
	lpfleet "github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/internal/realpart"
)

var update = flag.Bool("update", false, "regenerate kubernetes/prometheusrule.yaml from ../dashboards (make deploy-rules)")

const (
	kustomization = "kubernetes"
	ruleFile      = "kubernetes/prometheusrule.yaml"
)

// The rule files promtool tests, in the order the PrometheusRule carries them.
var ruleSources = []string{"../dashboards/alerts.yml", "../dashboards/rules.yml"}

// fleet is deploy/kubernetes rendered by kustomize, as kubectl apply -k does,
// each object decoded strictly into its real API type.
type fleet struct {
	namespace   corev1.Namespace
	statefulSet appsv1.StatefulSet
	service     corev1.Service
	configMap   corev1.ConfigMap
	podMonitor  monitoringv1.PodMonitor
	rule        monitoringv1.PrometheusRule
}

func render(t *testing.T) fleet { return renderDir(t, kustomization) }

// renderDir renders the kustomization in dir, as render does.
func renderDir(t *testing.T, dir string) fleet {
	t.Helper()
	var f fleet
	renderInto(t, dir, map[string]any{
		"v1/Namespace":                            &f.namespace,
		"apps/v1/StatefulSet":                     &f.statefulSet,
		"v1/Service":                              &f.service,
		"v1/ConfigMap":                            &f.configMap,
		"monitoring.coreos.com/v1/PodMonitor":     &f.podMonitor,
		"monitoring.coreos.com/v1/PrometheusRule": &f.rule,
	})
	return f
}

// renderInto renders the kustomization in dir, as kubectl apply -k does,
// and decodes each object strictly into the target of its kind: one each.
func renderInto(t *testing.T, dir string, targets map[string]any) {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var kinds []string
	for _, r := range resources.Resources() {
		kind := r.GetApiVersion() + "/" + r.GetKind()
		kinds = append(kinds, kind)
		target, ok := targets[kind]
		if !ok {
			t.Errorf("rendered a %s (%s), which the test does not decode", kind, r.GetName())
			continue
		}
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		decodeStrict(t, kind+" "+r.GetName(), y, target)
	}
	slices.Sort(kinds)
	want := slices.Sorted(func(yield func(string) bool) {
		for k := range targets {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(kinds, want) {
		t.Fatalf("rendered %v, want one each of %v", kinds, want)
	}
}

// decodeStrict decodes YAML as the API server's strict field validation
// does: an unknown field, a field in the wrong case or a duplicate key is an
// error (encoding/json, and so sigs.k8s.io/yaml's UnmarshalStrict, would
// take readOnlyRootFileSystem for readOnlyRootFilesystem).
func decodeStrict(t *testing.T, what string, y []byte, into any) {
	t.Helper()
	j, err := yaml.YAMLToJSONStrict(y)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	strictErrs, err := json.UnmarshalStrict(j, into)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, e := range strictErrs {
		t.Errorf("%s: %v", what, e)
	}
}

func TestFleetRendersAndDecodesStrictly(t *testing.T) {
	f := render(t)
	ss := f.statefulSet
	pod := ss.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	// Each replica's shard is its pod ordinal, out of as many as there are.
	shard := flagValue(t, c.Args, "--shard")
	if want := fmt.Sprintf("%s/%d", lpfleet.ShardOrdinal, *ss.Spec.Replicas); shard != want || *ss.Spec.Replicas != 3 {
		t.Errorf("--shard=%s with %d replicas, want 3 replicas and --shard=%s", shard, *ss.Spec.Replicas, want)
	}
	if !reflect.DeepEqual(ss.Spec.Selector.MatchLabels, pod.Labels) {
		t.Errorf("selector %v does not select the pod labels %v", ss.Spec.Selector.MatchLabels, pod.Labels)
	}

	// One replica per node where the nodes allow it: preferred, so that
	// all 3 run on a one- or two-node cluster.
	anti := pod.Spec.Affinity
	if anti == nil || anti.PodAntiAffinity == nil || len(anti.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		len(anti.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Fatalf("affinity %+v, want one preferred pod anti-affinity term and none required", anti)
	}
	preferred := anti.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]
	if preferred.Weight != 100 {
		t.Errorf("anti-affinity weight %d, want 100", preferred.Weight)
	}
	apartByHost(t, preferred.PodAffinityTerm, pod.Labels)

	// Every object in the kustomization's namespace, which it creates.
	ns := f.namespace.Name
	if ns != "loadprobe" {
		t.Errorf("namespace %q, want loadprobe", ns)
	}
	for what, got := range map[string]string{
		"StatefulSet": ss.Namespace, "Service": f.service.Namespace, "ConfigMap": f.configMap.Namespace,
		"PodMonitor": f.podMonitor.Namespace, "PrometheusRule": f.rule.Namespace,
	} {
		if got != ns {
			t.Errorf("the %s is in namespace %q, want %q", what, got, ns)
		}
	}

	// Locked down.
	sc := c.SecurityContext
	if sc == nil || !isTrue(sc.ReadOnlyRootFilesystem) || !isTrue(sc.RunAsNonRoot) || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v, want a read-only root, non-root, no privilege escalation, all capabilities dropped", sc)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.Cmp(req) != 0 {
			t.Errorf("%s request %s, limit %s; want both, equal (Guaranteed: a throttled generator reads as a saturated server)", r, &req, &lim)
		}
	}

	// Served and probed on the named port.
	if len(c.Ports) != 1 || c.Ports[0].Name != "http-metrics" || c.Ports[0].ContainerPort != 10471 {
		t.Errorf("ports %+v, want 10471 named http-metrics", c.Ports)
	}
	if got := flagValue(t, c.Args, "--web.listen-address"); got != ":10471" {
		t.Errorf("--web.listen-address=%s, want :10471", got)
	}
	for probe, path := range map[string]*corev1.Probe{"/-/healthy": c.LivenessProbe, "/-/ready": c.ReadinessProbe} {
		if path == nil || path.HTTPGet == nil || path.HTTPGet.Path != probe || path.HTTPGet.Port.String() != "http-metrics" {
			t.Errorf("probe %+v, want GET %s on http-metrics", path, probe)
		}
	}

	// The config the replicas read is the generated ConfigMap's loadprobe.yml.
	configFile := flagValue(t, c.Args, "--config.file")
	mount := mountOf(t, c, filepath.Dir(configFile))
	vol := volumeOf(t, pod.Spec, mount.Name)
	if vol.ConfigMap == nil || vol.ConfigMap.Name != f.configMap.Name {
		t.Errorf("volume %s %+v, want the ConfigMap %s", vol.Name, vol.VolumeSource, f.configMap.Name)
	}
	if _, err := config.Parse(configFile, []byte(f.configMap.Data[filepath.Base(configFile)])); err != nil {
		t.Errorf("the ConfigMap's %s is not a valid loadprobe config:\n%v", filepath.Base(configFile), err)
	}
	// The root is read-only: the results directory must be a volume.
	mountOf(t, c, flagValue(t, c.Args, "--storage.path"))

	// A headless Service governs the StatefulSet and selects its pods.
	svc := f.service
	if svc.Name != ss.Spec.ServiceName || svc.Spec.ClusterIP != corev1.ClusterIPNone || !reflect.DeepEqual(svc.Spec.Selector, pod.Labels) {
		t.Errorf("service %s (cluster IP %q, selector %v), want the headless %s selecting %v",
			svc.Name, svc.Spec.ClusterIP, svc.Spec.Selector, ss.Spec.ServiceName, pod.Labels)
	}

	// Prometheus scrapes every replica on its own.
	pm := f.podMonitor.Spec
	if !reflect.DeepEqual(pm.Selector.MatchLabels, pod.Labels) || len(pm.PodMetricsEndpoints) != 1 ||
		pm.PodMetricsEndpoints[0].Port == nil || *pm.PodMetricsEndpoints[0].Port != "http-metrics" {
		t.Errorf("pod monitor %+v, want the pods' http-metrics port", pm)
	}
}

// apartByHost checks an anti-affinity term: the pod's own labels, apart by
// node.
func apartByHost(t *testing.T, term corev1.PodAffinityTerm, labels map[string]string) {
	t.Helper()
	if term.TopologyKey != corev1.LabelHostname || term.LabelSelector == nil || !reflect.DeepEqual(term.LabelSelector.MatchLabels, labels) {
		t.Errorf("anti-affinity term %+v, want the pod's own labels %v apart by %s", term, labels, corev1.LabelHostname)
	}
}

// The component one-per-node makes the anti-affinity required, as the
// kustomization's comment says to add it, and changes nothing else.
func TestOnePerNodeComponentRequiresTheAntiAffinity(t *testing.T) {
	base, err := os.ReadFile(filepath.Join(kustomization, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const commented = "# components:\n#   - components/one-per-node\n"
	if !bytes.Contains(base, []byte(commented)) {
		t.Fatalf("kustomization.yaml does not offer the component as\n%s", commented)
	}
	// The kustomization with the component uncommented, beside the original.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(kustomization)); err != nil {
		t.Fatal(err)
	}
	with := bytes.Replace(base, []byte(commented), []byte("components:\n  - components/one-per-node\n"), 1)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), with, 0o644); err != nil {
		t.Fatal(err)
	}
	plain, required := render(t), renderDir(t, dir)
	pod := required.statefulSet.Spec.Template
	anti := pod.Spec.Affinity.PodAntiAffinity
	if len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 1 || len(anti.PreferredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Fatalf("with one-per-node: anti-affinity %+v, want one required term and none preferred", anti)
	}
	apartByHost(t, anti.RequiredDuringSchedulingIgnoredDuringExecution[0], pod.Labels)
	pod.Spec.Affinity = plain.statefulSet.Spec.Template.Spec.Affinity
	if !reflect.DeepEqual(pod, plain.statefulSet.Spec.Template) {
		t.Error("one-per-node changes more of the pod than its anti-affinity")
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

// flagValue is the value of --name=value in args.
func flagValue(t *testing.T, args []string, name string) string {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	t.Fatalf("args %q have no %s", args, name)
	return ""
}

func mountOf(t *testing.T, c corev1.Container, path string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return m
		}
	}
	t.Fatalf("no volume is mounted at %s: %+v", path, c.VolumeMounts)
	return corev1.VolumeMount{}
}

func volumeOf(t *testing.T, pod corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s", name)
	return corev1.Volume{}
}

// ruleGroups reads the rule files promtool tests, strictly, as the Prometheus
// Operator's rule groups.
func ruleGroups(t *testing.T) []monitoringv1.RuleGroup {
	t.Helper()
	var groups []monitoringv1.RuleGroup
	for _, file := range ruleSources {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Groups []monitoringv1.RuleGroup `json:"groups"`
		}
		decodeStrict(t, file, b, &f)
		groups = append(groups, f.Groups...)
	}
	return groups
}

// prometheusRule is kubernetes/prometheusrule.yaml as the rule files make it.
func prometheusRule(t *testing.T) []byte {
	t.Helper()
	doc := map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name":   "loadprobe",
			"labels": map[string]string{"app.kubernetes.io/name": "loadprobe"},
		},
		"spec": map[string]any{"groups": ruleGroups(t)},
	}
	y, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	header := "# Generated by `make deploy-rules` from " + strings.ReplaceAll(strings.Join(ruleSources, " and "), "../", "") +
		"\n# (the rules promtool tests): do not edit; edit those and regenerate.\n"
	return append([]byte(header), y...)
}

// The PrometheusRule carries the very rules promtool tests: regenerated
// from them, it is the file on disk, and rendered by kustomize its groups
// are theirs.
func TestPrometheusRuleCarriesTheDashboardsRules(t *testing.T) {
	want := prometheusRule(t)
	if *update {
		if err := os.WriteFile(ruleFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(ruleFile)
	if err != nil {
		t.Fatalf("%v: run `make deploy-rules` to generate it", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with %s: run `make deploy-rules` (go test ./deploy -run %s -update) and commit the result",
			ruleFile, strings.Join(ruleSources, " and "), t.Name())
	}

	rendered := render(t).rule.Spec.Groups
	if groups := ruleGroups(t); !reflect.DeepEqual(rendered, groups) {
		t.Errorf("the rendered PrometheusRule has %d groups that differ from the %d of %s", len(rendered), len(groups), strings.Join(ruleSources, " and "))
	}
	var rules int
	for _, g := range rendered {
		rules += len(g.Rules)
	}
	if len(rendered) < 2 || rules < 10 {
		t.Errorf("the PrometheusRule carries %d groups of %d rules in all, want the alerts and the recording rules", len(rendered), rules)
	}
}

// The StatefulSet's command line is one the binary takes: built from this
// tree and run as pod loadprobe-1 runs it (its host name set in a UTS
// namespace of its own), with --config.check added, it parses every flag,
// reads its shard from the host name and finds the ConfigMap's config
// valid. Under a host name without an ordinal, --shard stops it.
func TestStatefulSetArgsAreTheBinarysFlags(t *testing.T) {
	unshare := hostnameSandbox(t)
	f := render(t)
	c := f.statefulSet.Spec.Template.Spec.Containers[0]
	dir := t.TempDir()
	bin := filepath.Join(dir, "loadprobe")
	// Built in loadprobe's own module, with its own go.sum: this module
	// requires it only for the few packages its tests read.
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	configFile := flagValue(t, c.Args, "--config.file")
	local := filepath.Join(dir, filepath.Base(configFile))
	if err := os.WriteFile(local, []byte(f.configMap.Data[filepath.Base(configFile)]), 0o644); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, strings.Replace(a, "--config.file="+configFile, "--config.file="+local, 1))
	}
	args = append(args, "--config.check")

	asHost := func(hostname string) (int, string) {
		cmd := exec.Command(unshare, append([]string{"--uts", "sh", "-c", `hostname "$0" && exec "$@"`, hostname, bin}, args...)...)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	pod := f.statefulSet.Name + "-1"
	if code, out := asHost(pod); code != 0 || !strings.Contains(out, "is valid") {
		t.Errorf("loadprobe %s as pod %s: exit %d, want 0 and a valid config\n%s", strings.Join(args, " "), pod, code, out)
	}
	if code, out := asHost(f.statefulSet.Name); code != 2 || !strings.Contains(out, "--shard") {
		t.Errorf("loadprobe %s on host %s: exit %d, want 2 naming --shard\n%s", strings.Join(args, " "), f.statefulSet.Name, code, out)
	}
}

// hostnameSandbox returns unshare(1) once it has shown that it can give a
// process a host name of its own (root, or user namespaces). Like
// internal/realpart: without it the test skips, and fails under CI=true.
func hostnameSandbox(t *testing.T) string {
	t.Helper()
	unshare := realpart.Find(t, "unshare", "apt-get install util-linux")
	if out, err := exec.Command(unshare, "--uts", "hostname", "loadprobe-0").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("unshare --uts cannot set a host name and CI=true: %v\n%s", err, out)
		}
		t.Skipf("unshare --uts cannot set a host name (%v: %s); CI=true makes this fatal", err, out)
	}
	return unshare
}

// The image holds no config of its own, which would aim at 127.0.0.1 inside
// the container: it reads the one mounted where the StatefulSet mounts the
// ConfigMap (docs/fleet.md, "On Kubernetes").
func TestImageReadsTheMountedConfig(t *testing.T) {
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	c := render(t).statefulSet.Spec.Template.Spec.Containers[0]
	configFile := flagValue(t, c.Args, "--config.file")
	for line := range strings.Lines(string(dockerfile)) {
		if strings.HasPrefix(line, "COPY") && (strings.Contains(line, ".yml") || strings.Contains(line, "/etc/loadprobe")) {
			t.Errorf("the Dockerfile copies a config into the image: %s", line)
		}
	}
	if !strings.Contains(string(dockerfile), `CMD ["--config.file=`+configFile+`"]`) {
		t.Errorf("the Dockerfile's CMD does not read %s, where the StatefulSet mounts the config", configFile)
	}
}
