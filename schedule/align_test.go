package schedule

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadprobe/loadprobe/fleet"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober"
	"github.com/loadprobe/loadprobe/result"
)

// aligned is a run as the runner saw it: the probe, when it was called and
// the boundary it was asked to align to, as offsets from the bubble's
// epoch-aligned start.
type alignedRun struct {
	probe       string
	called, due time.Duration
}

// alignBubble runs f with a scheduler of shard 1 of 3 (or lone) whose
// runner records every run it is asked for. The bubble's clock starts on a
// whole minute since the Unix epoch (2000-01-01); f starts 17s into it, so
// that no boundary falls on f's start.
func alignBubble(t *testing.T, sh fleet.Shard, f func(t *testing.T, s *Scheduler, runs func() []alignedRun)) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var mu sync.Mutex
		var runs []alignedRun
		run := func(ctx context.Context, p *plan.Probe, opts prober.Options) (result.Result, error) {
			ar := alignedRun{probe: p.Name, called: time.Since(t0), due: -1}
			if !opts.Align.IsZero() {
				ar.due = opts.Align.Sub(t0)
			}
			mu.Lock()
			runs = append(runs, ar)
			mu.Unlock()
			return fakeRun(ctx, p, opts)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := New(ctx, Options{Run: run, Observer: &recObserver{t0: t0}, Logger: discardLogger, Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		s.lookup = fakeLookup
		time.Sleep(17 * time.Second)
		f(t, s, func() []alignedRun {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return append([]alignedRun(nil), runs...)
		})
		cancel()
		s.Wait()
	})
}

// A fleet's replica starts every run on a multiple of its interval since
// the epoch, with no jitter; a continuous probe's runs follow one another
// on multiples of a run's aligned length (a 2s step and its 1s settle
// allowance: 3s); a control starts on the boundary after its
// probe's aligned length; a run asked for by hand on the next 10s
// boundary. A lone loadprobe runs at once and aligns nothing.
func TestAlignedRunsStartOnBoundaries(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		name   string
		shard  fleet.Shard
		probes string
		// trigger asks for a run of probe a at 43s.
		trigger bool
		want    []alignedRun
	}{
		{
			name: "interval", shard: fleet.Shard{Index: 1, Count: 3},
			probes: `  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 2s}
    schedule: {interval: 1m, jitter: 30s}
`,
			want: []alignedRun{{"a", 60 * s, 60 * s}, {"a", 120 * s, 120 * s}},
		},
		{
			name: "continuous", shard: fleet.Shard{Index: 1, Count: 3},
			probes: `  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1], step_duration: 2s}
    schedule: {continuous: true}
`,
			// The fake run takes 2s: from 18s to 20s, the next at 21s.
			want: []alignedRun{{"a", 18 * s, 18 * s}, {"a", 21 * s, 21 * s}, {"a", 24 * s, 24 * s}},
		},
		{
			name: "control", shard: fleet.Shard{Index: 1, Count: 3},
			probes: `  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 2s}
    schedule: {interval: 1m}
    control: c
  - name: c
    request: {url: "http://127.0.0.1/noop"}
    load: {concurrency: [1], step_duration: 2s}
    schedule: {interval: 1h}
`,
			// c's own first run is due at the hour: never in this test.
			want: []alignedRun{{"a", 60 * s, 60 * s}, {"c", 64 * s, 66 * s}},
		},
		{
			name: "trigger", shard: fleet.Shard{Index: 1, Count: 3}, trigger: true,
			probes: `  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 2s}
    schedule: {interval: 1h}
`,
			want: []alignedRun{{"a", 43 * s, 50 * s}},
		},
		{
			name: "lone", shard: fleet.Shard{},
			probes: `  - name: a
    request: {url: "http://127.0.0.1/work"}
    load: {concurrency: [1, 2], step_duration: 2s}
    schedule: {interval: 1m}
`,
			want: []alignedRun{{"a", 17 * s, -1}, {"a", 77 * s, -1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alignBubble(t, tc.shard, func(t *testing.T, sch *Scheduler, runs func() []alignedRun) {
				sch.Apply(schedConfig(t, "probes:\n"+tc.probes))
				if tc.trigger {
					time.Sleep(26 * time.Second)
					if err := sch.Trigger("a"); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Until(time.Unix(946684800, 0).Add(tc.want[len(tc.want)-1].called + time.Second)))
				got := runs()
				if len(got) < len(tc.want) {
					t.Fatalf("runs %+v, want %+v first", got, tc.want)
				}
				for i, w := range tc.want {
					if got[i] != w {
						t.Errorf("runs %+v, want %+v first", got, tc.want)
						break
					}
				}
			})
		})
	}
}
