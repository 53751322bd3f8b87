package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/loadprobe/loadprobe/internal/finitejson"
	"github.com/loadprobe/loadprobe/internal/regularfile"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/result"
	"github.com/loadprobe/loadprobe/schedule/state"
)

// Store keeps the latest result of every probe in one JSON file, with the
// probe's history of runs, so that a restarted daemon serves
// the last breaking points with their original timestamps instead of
// nothing.
type Store struct {
	path string
}

// storedProbe is one probe's entry in the file.
type storedProbe struct {
	Result        result.Result `json:"result"`
	LastCompleted time.Time     `json:"last_completed"`
	// History holds the probe's last runs, the latest included; a file
	// written before it had none.
	History []state.Run `json:"history,omitempty"`
}

type storedFile struct {
	Probes []storedProbe `json:"probes"`
}

// maxStoreSize bounds the results file: it is read whole at start, and the
// latest results of any sane config are a small fraction of it.
const maxStoreSize = 64 << 20

// NewStore keeps results in dir/results.json, creating dir if needed.
func NewStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage path: %w", err)
	}
	return &Store{path: filepath.Join(dir, "results.json")}, nil
}

// Load returns the stored states (only Probe.Name is set of their
// config); none when nothing was stored yet.
func (s *Store) Load() ([]state.Probe, error) {
	data, err := regularfile.Read(s.path, maxStoreSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f storedFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	states := make([]state.Probe, 0, len(f.Probes))
	for _, sp := range f.Probes {
		if sp.Result.Name == "" {
			continue // nothing to attach it to
		}
		st := state.Probe{Probe: &plan.Probe{Name: sp.Result.Name}, Last: &sp.Result, LastCompleted: sp.LastCompleted,
			History: sp.History, Change: capacityChange(sp.History)}
		states = append(states, st)
	}
	return states, nil
}

// Save writes the latest result of every probe that has one, with its
// history of runs, atomically: a crash leaves either the old file or the
// new one, never half of one.
func (s *Store) Save(states []state.Probe) error {
	f := storedFile{Probes: []storedProbe{}}
	for _, st := range states {
		if st.Last != nil {
			f.Probes = append(f.Probes, storedProbe{Result: *st.Last, LastCompleted: st.LastCompleted, History: st.History})
		}
	}
	data, err := finitejson.Marshal(f) // one figure that is not finite must not lose every result
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".results-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	// The results are no secret: /api/v1/results serves them.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return err
	}
	// The rename itself is durable only once the directory is synced.
	dir, err := os.Open(filepath.Dir(s.path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// pausedFile is the file whose presence keeps the pause switch on across a
// restart.
const pausedFile = "paused"

// Paused reports whether the pause switch was on when last saved.
func (s *Store) Paused() bool {
	_, err := os.Stat(filepath.Join(filepath.Dir(s.path), pausedFile))
	return err == nil
}

// SavePaused keeps the pause switch: on, a file; off, none.
func (s *Store) SavePaused(paused bool) error {
	name := filepath.Join(filepath.Dir(s.path), pausedFile)
	if !paused {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.WriteFile(name, []byte("POST /-/resume (with --web.enable-lifecycle) to let loadprobe send load again.\n"), 0o644)
}

// setAside moves a results file that cannot be read out of the way, to the
// same name with ".corrupt" added, and returns that name.
func (s *Store) setAside() (string, error) {
	aside := s.path + ".corrupt"
	return aside, os.Rename(s.path, aside)
}
