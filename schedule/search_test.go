package schedule

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/result"
)

// While a search runs, the probe's state says what its step under way is
// for, as the run's progress tells it; once the run ends, nothing.
func TestSchedulerKeepsWhatASearchStepIsFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const doing = "refining the knee between 8 and 12"
		run := func(ctx context.Context, p *plan.Probe, opts prober.Options) (result.Result, error) {
			opts.Progress(prober.Progress{Probe: p.Name, Step: 7, Steps: 24, Level: 10, Search: doing})
			time.Sleep(time.Second)
			return result.Result{Name: p.Name, Mode: p.Load.Mode(), Ended: result.ResultCompleted, Started: time.Now(),
				Steps: []result.Step{{Level: 10, Search: result.SearchRefine}}}, nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := New(ctx, Options{Run: run, Observer: &recObserver{t0: time.Now()}, Logger: discardLogger})
		if err != nil {
			t.Fatal(err)
		}
		s.lookup = fakeLookup
		s.Apply(schedConfig(t, `probes:
  - name: searched
    request: {url: "http://127.0.0.1/work"}
    load: {search: {concurrency: {from: 1, max: 64}}, step_duration: 1s}
    schedule: {interval: 1h}
`))
		after(500 * time.Millisecond)
		if got := probeState(t, s, "searched").Doing; got != doing {
			t.Errorf("during the run: doing %q, want %q", got, doing)
		}
		after(time.Second)
		if st := probeState(t, s, "searched"); st.Doing != "" || st.Last == nil {
			t.Errorf("after the run: doing %q, last %v; want nothing under way and the run kept", st.Doing, st.Last)
		}
		cancel()
		s.Wait()
	})
}
