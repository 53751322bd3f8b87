package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	lpresult "github.com/loadprobe/loadprobe/result"
)

// jobManifest is deploy/kubernetes/job's Job: its pods' count and arguments.
const jobManifest = "../deploy/kubernetes/job/job.yaml"

// jobConfig is the fleet test's ramp of /work with an expectation that the
// fleet's capacity (12 workers of 50ms: about 234/s) meets and one
// replica's share (about a third) does not.
const jobConfig = `allowed_targets: [127.0.0.1]
probes:
  - name: work
    request: {url: "http://TARGET/work", timeout: 1s}
    load: {concurrency: [3, 6, 12, 24, 48], step_duration: 2s}
    expect: {min_capacity: 150}
`

// jobArgs are the arguments of the Job's container and its completions.
func jobArgs(t *testing.T) ([]string, int) {
	t.Helper()
	raw, err := os.ReadFile(jobManifest)
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Spec struct {
			Completions int
			Template    struct {
				Spec struct {
					Containers []struct{ Args []string }
				}
			}
		}
	}
	if err := yaml.Unmarshal(raw, &job); err != nil || len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: %v, %+v", jobManifest, err, job)
	}
	return job.Spec.Template.Spec.Containers[0].Args, job.Spec.Completions
}

// The Indexed Job of deploy/kubernetes/job as Kubernetes runs it, on
// loopback: its pods' arguments, JOB_COMPLETION_INDEX 0 to 2 expanded in
// them, run as 3 processes (the cluster's addresses and files replaced by
// the test's, --fleet.wait shortened to 5s), scraped every second by a real
// Prometheus under the job label the manifest's selector names. They start
// together and run the fleet's ramp; replica 0 prints the fleet's result
// and exits 0 by the fleet's capacity, which one replica's share would not
// meet; the others exit 0.
func TestOneShotFleetRunsAsAnIndexedJob(t *testing.T) {
	began := time.Now()
	b := newFleetBench(t, jobConfig)
	promBin, dir, bin, cfgFile := b.promBin, b.dir, b.bin, b.cfgFile

	args, completions := jobArgs(t)
	if completions != fleetReplicas {
		t.Fatalf("the Job runs %d pods, the test %d", completions, fleetReplicas)
	}
	promAddr := freePort(t)
	addrs := make([]string, completions)
	for i := range addrs {
		addrs[i] = freePort(t)
	}
	writeFile(t, filepath.Join(dir, "prometheus-job.yml"), fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: loadprobe/loadprobe-run
    static_configs: [{targets: ["%s"]}]
`, strings.Join(addrs, `", "`)))
	startProc(t, "prometheus", dir, promBin, "--config.file="+filepath.Join(dir, "prometheus-job.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data-job"), "--web.listen-address="+promAddr)
	waitHTTP(t, "http://"+promAddr+"/-/ready")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type pod struct {
		cmd            *exec.Cmd
		stdout, stderr bytes.Buffer
	}
	pods := make([]*pod, completions)
	for i := range pods {
		var podArgs []string
		for _, a := range args {
			name, _, _ := strings.Cut(a, "=")
			switch name {
			case "--config.file":
				a = "--config.file=" + cfgFile
			case "--fleet.prometheus-url":
				a = "--fleet.prometheus-url=http://" + promAddr
			case "--fleet.wait":
				a = "--fleet.wait=5s"
			case "--web.listen-address":
				a = "--web.listen-address=" + addrs[i]
			}
			// Kubernetes expands $(VAR) of the container's environment.
			podArgs = append(podArgs, strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i)))
		}
		p := &pod{cmd: exec.CommandContext(ctx, bin, podArgs...)}
		p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = dir, &p.stdout, &p.stderr
		p.cmd.Env = append(os.Environ(), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pods[i] = p
	}
	results := make([]lpresult.Result, completions)
	for i, p := range pods {
		err := p.cmd.Wait()
		var out struct{ Probes []lpresult.Result }
		if jerr := json.Unmarshal(p.stdout.Bytes(), &out); jerr != nil || len(out.Probes) != 1 {
			t.Fatalf("pod %d (%v): its JSON: %v\nstderr:\n%s", i, err, jerr, p.stderr.String())
		}
		results[i] = out.Probes[0]
		t.Logf("pod %d exited %d, %.1fs after the test's start; own capacity %+v", i, p.cmd.ProcessState.ExitCode(), since(began), results[i].Capacity)
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("pod %d exited %d, want 0; stderr:\n%s", i, code, p.stderr.String())
		}
	}
	f := results[0].Fleet
	if f == nil {
		t.Fatalf("replica 0 printed no fleet; stderr:\n%s", pods[0].stderr.String())
	}
	t.Logf("fleet: %s", fleetText(f))
	if !f.Valid || f.Replicas != completions || len(f.MissingShards) != 0 {
		t.Errorf("fleet run: %s; want valid with every shard", fleetText(f))
	}
	if k := f.BreakingPoints.Knee; k == nil || k.Level != fleetWorkers {
		t.Errorf("fleet knee %+v, want at %d connections (the pool)", k, fleetWorkers)
	}
	if f.Capacity == nil || f.Capacity.Throughput < 150 {
		t.Errorf("fleet capacity %+v, want the 150/s expected", f.Capacity)
	}
	if share := results[1].Capacity; share == nil || share.Throughput >= 150 {
		t.Errorf("replica 1's own capacity %+v, want a share below the 150/s the fleet meets", share)
	}
	if f.StepStartSkewSeconds > stepSkew.Seconds() {
		t.Errorf("the replicas' steps started %.3fs apart, want within %s", f.StepStartSkewSeconds, stepSkew)
	}
	if log := pods[0].stderr.String(); !strings.Contains(log, "fleet of 3 replicas") || !strings.Contains(log, "expected at least 150/s: met") {
		t.Errorf("replica 0's log holds no fleet table meeting its expectation:\n%s", log)
	}
}
