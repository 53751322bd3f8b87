package schedule

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

func storedResult(name string, started time.Time) result.Result {
	return result.Result{
		Name: name, Mode: "concurrency", Ended: result.ResultCompleted, Started: started, DurationSeconds: 12.5,
		Steps: []result.Step{{
			Level: 4, DurationSeconds: 5, Attempts: 2000, Throughput: 400, Goodput: 399.5,
			Latency:   result.Latency{Mean: 0.01, P50: 0.01, P90: 0.011, P95: 0.012, P99: 0.015, P999: 0.02, Max: 0.03},
			Responses: result.Codes{result.HTTPStatus(200): 1998, result.HTTPStatus(503): 2}, HTTPErrors: result.Codes{result.HTTPStatus(503): 2}, Errors: map[string]int64{"timeout": 0},
			InFlight: 4, LoadHeldRatio: 1, SettleSeconds: 0.01,
			PerSecond: []result.Second{{Second: 0, Success: 400}},
		}},
		PeakThroughput: 399.5,
		BreakingPoints: result.BreakingPoints{Knee: &result.Point{Level: 4, Throughput: 399.5}},
		Capacity:       &result.Point{Level: 4, Throughput: 399.5},
		Valid:          true,
		Diagnosis:      []string{"throughput stopped improving at 4 connections"},
	}
}

func TestStoreRoundTripKeepsTimestampsExactly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "state")
	s, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Nanoseconds, a zone other than UTC and a monotonic reading: what
	// time.Now() gives a run.
	started := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("CET", 3600))
	now := time.Now()
	a, b := storedResult("a", started), storedResult("b", now)
	b.Ended, b.Capacity, b.Valid = result.ResultAborted, nil, false
	want := []state.Probe{
		{Last: &a, LastCompleted: started.Add(12500 * time.Millisecond)},
		{Last: &b, LastCompleted: now.Add(-time.Hour)},
	}
	// A probe without a finished run has nothing to keep.
	if err := s.Save(append(want, state.Probe{Current: &a})); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("loaded %d states, want 2", len(got))
	}
	for i, g := range got {
		w := want[i]
		if g.Probe.Name != w.Last.Name {
			t.Errorf("state %d: probe name %q, want %q", i, g.Probe.Name, w.Last.Name)
		}
		if !g.Last.Started.Equal(w.Last.Started) || g.Last.Started.UnixNano() != w.Last.Started.UnixNano() {
			t.Errorf("%s: started %v, want exactly %v", g.Probe.Name, g.Last.Started, w.Last.Started)
		}
		if !g.LastCompleted.Equal(w.LastCompleted) {
			t.Errorf("%s: last completed %v, want exactly %v", g.Probe.Name, g.LastCompleted, w.LastCompleted)
		}
		// The rest comes back as it was.
		gl, wl := *g.Last, *w.Last
		gl.Started, wl.Started = time.Time{}, time.Time{}
		if !reflect.DeepEqual(gl, wl) {
			t.Errorf("%s: loaded\n%+v\nwant\n%+v", g.Probe.Name, gl, wl)
		}
		if g.Current != nil {
			t.Errorf("%s: a run under way came back from the store", g.Probe.Name)
		}
	}
}

func TestStoreMissingFileIsNoError(t *testing.T) {
	s, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil || len(got) != 0 {
		t.Errorf("Load with nothing stored = %v, %v; want nothing, no error", got, err)
	}
	// Nothing to keep yet (no probe has finished a run) round-trips too.
	if err := s.Save([]state.Probe{{Current: &result.Result{Name: "a"}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(); err != nil || len(got) != 0 {
		t.Errorf("Load after saving no finished run = %v, %v; want nothing, no error", got, err)
	}
}

func TestStoreCorruptFileIsAnErrorNamingIt(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "results.json")
	for _, body := range []string{`{"probes": [{"result": {"name": "a", "started": "yesterday"}}]}`, `{"probes": [`, "\x00\x00"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.Load()
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Load of %q = %v, want an error naming %s", body, err, path)
		}
	}
	// A scheduler starts without the results it cannot read, and sets the
	// file aside rather than overwriting it with the next run.
	if _, err := New(t.Context(), Options{Run: fakeRun, Observer: &recObserver{}, Store: s, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatalf("New on a corrupt store = %v, want it to start", err)
	}
	if kept, err := os.ReadFile(path + ".corrupt"); err != nil || string(kept) != "\x00\x00" {
		t.Errorf("the unreadable file was not set aside as %s.corrupt: %q, %v", path, kept, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", path, err)
	}
}

func TestStoreWritesAtomically(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Leftovers of a crash between write and rename are not read.
	if err := os.WriteFile(filepath.Join(dir, ".results-123.json"), []byte("{half"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := storedResult("a", time.Now())
	for i := range 3 {
		r := first
		r.DurationSeconds = float64(i)
		if err := s.Save([]state.Probe{{Last: &r}}); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{".results-123.json", "results.json"}) {
		t.Errorf("storage dir holds %v, want results.json and the old leftover only: no temp file left behind", names)
	}
	got, err := s.Load()
	if err != nil || len(got) != 1 || got[0].Last.DurationSeconds != 2 {
		t.Errorf("Load = %+v, %v; want the last save", got, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "results.json")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("results.json: %v, %v; want mode 0644", fi.Mode(), err)
	}

	// A save that cannot write leaves the old file whole.
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if f, err := os.CreateTemp(dir, "probe"); err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Log("directory permissions do not apply (running as root); skipping the failed-save check")
		return
	}
	if err := s.Save([]state.Probe{{Last: &first}}); err == nil {
		t.Error("Save into a read-only directory succeeded")
	}
	if got, err := s.Load(); err != nil || got[0].Last.DurationSeconds != 2 {
		t.Errorf("after a failed save Load = %+v, %v; want the last good save", got, err)
	}
}

func TestNewStoreOnAFileIsAnError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("NewStore on a file = %v, want an error naming it", err)
	}
}
