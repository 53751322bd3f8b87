package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/loadprobe/loadprobe/config"
)

// defaultConfigFile is --config.file's default.
const defaultConfigFile = "loadprobe.yml"

// probeSource is where `run` reads its probes: a config file, standard
// input (--config.file=-), or the flags of one URL.
type probeSource struct {
	file    string
	fileSet bool // --config.file was given
	url     *urlProbe
	stdin   io.Reader
}

// stdinName names standard input in a config's errors.
const stdinName = "<stdin>"

// load reads and checks the config, and returns it with the name its
// errors give the file.
func (s probeSource) load() (*config.Config, string, error) {
	switch {
	case s.url.url != "" && s.fileSet:
		return nil, "", errors.New("--url probes one URL without a config file: give --url or --config.file, not both")
	case s.url.url != "":
		data, err := s.url.config()
		if err != nil {
			return nil, "", err
		}
		cfg, err := config.Parse(urlProbeName, data)
		if err != nil {
			return nil, "", flagErrors(err)
		}
		return cfg, urlProbeName, nil
	case len(s.url.given()) > 0:
		return nil, "", fmt.Errorf("%s: given without --url, whose probe they describe", strings.Join(s.url.given(), ", "))
	case s.file == "-":
		cfg, err := config.ParseReader(stdinName, s.stdin)
		return cfg, stdinName, err
	}
	if err := missingDefault(s.file, s.fileSet); err != nil {
		return nil, "", err
	}
	cfg, err := config.LoadFile(s.file)
	return cfg, s.file, err
}

// missingDefault says what to do when the default config file is absent:
// a new user's first command is likely to meet it.
func missingDefault(file string, set bool) error {
	if _, err := os.Stat(file); set || !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("no %s here: write one as README.md's \"Your first probe\" shows, name one with --config.file, "+
		"or probe one URL at once: loadprobe run --url=http://127.0.0.1:8080/ --concurrency=1,2,4", file)
}
