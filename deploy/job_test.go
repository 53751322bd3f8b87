package deploy

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/loadprobe/loadprobe/config"
)

// The one-shot fleet in deploy/kubernetes/job, rendered by kustomize and
// decoded strictly: an Indexed Job of N pods at once, none retried, each
// `loadprobe run` with its index as its shard of N, scraped by a
// PodMonitor whose job label the replicas' --fleet.selector names, and
// reading the generated ConfigMap's valid config (docs/fleet.md, "A
// one-shot fleet").
func TestJobRendersAndDecodesStrictly(t *testing.T) {
	var (
		job        batchv1.Job
		configMap  corev1.ConfigMap
		podMonitor monitoringv1.PodMonitor
	)
	renderInto(t, "kubernetes/job", map[string]any{
		"batch/v1/Job":                        &job,
		"v1/ConfigMap":                        &configMap,
		"monitoring.coreos.com/v1/PodMonitor": &podMonitor,
	})
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || spec.Completions == nil ||
		spec.Parallelism == nil || *spec.Parallelism != *spec.Completions || spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Fatalf("job spec %+v: want Indexed, as many pods at once as completions, and no retry", spec)
	}
	pod := spec.Template
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || len(pod.Spec.Containers) != 1 {
		t.Fatalf("pod: restart policy %s, %d containers; want Never and one", pod.Spec.RestartPolicy, len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Fatalf("args %v, want loadprobe run", c.Args)
	}
	if shard, want := flagValue(t, c.Args, "--shard"), fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", *spec.Completions); shard != want {
		t.Errorf("--shard=%s, want %s: each pod's index, out of the completions", shard, want)
	}
	if sel, want := flagValue(t, c.Args, "--fleet.selector"), fmt.Sprintf(`job="%s/%s"`, podMonitor.Namespace, podMonitor.Name); sel != want {
		t.Errorf("--fleet.selector=%s, want %s: the job label the PodMonitor gives the pods' series", sel, want)
	}
	flagValue(t, c.Args, "--fleet.prometheus-url")
	pm := podMonitor.Spec
	if !reflect.DeepEqual(pm.Selector.MatchLabels, pod.Labels) || len(pm.PodMetricsEndpoints) != 1 || pm.PodMetricsEndpoints[0].Port == nil ||
		len(c.Ports) != 1 || *pm.PodMetricsEndpoints[0].Port != c.Ports[0].Name ||
		flagValue(t, c.Args, "--web.listen-address") != fmt.Sprintf(":%d", c.Ports[0].ContainerPort) {
		t.Errorf("pod monitor %+v, ports %+v: want the pods scraped on the port --web.listen-address serves", pm, c.Ports)
	}
	configFile := flagValue(t, c.Args, "--config.file")
	vol := volumeOf(t, pod.Spec, mountOf(t, c, filepath.Dir(configFile)).Name)
	if vol.ConfigMap == nil || vol.ConfigMap.Name != configMap.Name {
		t.Errorf("volume %s %+v, want the ConfigMap %s", vol.Name, vol.VolumeSource, configMap.Name)
	}
	if _, err := config.Parse(configFile, []byte(configMap.Data[filepath.Base(configFile)])); err != nil {
		t.Errorf("the ConfigMap's %s is not a valid loadprobe config:\n%v", filepath.Base(configFile), err)
	}
}
