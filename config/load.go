package config

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/internal/regularfile"
)

// maxConfigSize bounds the config file: it is read whole, and a config
// within the limits of validation is far smaller.
const maxConfigSize = 4 << 20

// LoadFile reads and parses a config file. Errors name the file as given here.
// (It is not called Load: that name is the load section's type.)
func LoadFile(filename string) (*Config, error) { return loadFile(filename, nil) }

// loadFile is LoadFile for a reload of running, the config in force (nil:
// none). A data file whose content has not changed takes its rows from
// running instead of being parsed again, and is held once, not twice.
func loadFile(filename string, running *Config) (*Config, error) {
	data, err := regularfile.Read(filename, maxConfigSize)
	if err != nil {
		return nil, err
	}
	return parse(filename, data, running)
}

// ParseReader is Parse of what r holds, read up to the size a config file
// may have.
func ParseReader(filename string, r io.Reader) (*Config, error) {
	data, err := regularfile.ReadFrom(filename, r, maxConfigSize)
	if err != nil {
		return nil, err
	}
	return Parse(filename, data)
}

// Parse decodes and validates a config. filename names the file in errors
// and is where relative paths (body_file, the client's *_file settings) are
// resolved from. Every problem found is returned, joined with errors.Join,
// one "file:line: path: message" per line, in file order.
func Parse(filename string, data []byte) (*Config, error) { return parse(filename, data, nil) }

func parse(filename string, data []byte, running *Config) (*Config, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, syntaxError(filename, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		if n := top(&extra); n != nil && n.ShortTag() != "!!null" {
			return nil, &lineError{File: filename, Line: n.Line, Msg: "a config file holds one YAML document, found a second"}
		}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(filename, data, err)
	}

	cfg := defaultConfig
	v := newValidator(running)
	if n := top(&doc); n != nil {
		v.lines[""] = n.Line
		newDecoder(v, n).decode(n, reflect.ValueOf(&cfg).Elem(), nil)
	}
	v.config(&cfg, filepath.Dir(filename))
	if err := v.err(filename); err != nil {
		return nil, err
	}
	cfg.hash = hashOf(data)
	cfg.rows, cfg.sets = v.rows, v.sets
	return &cfg, nil
}

// top returns the top node of a document.
func top(doc *yaml.Node) *yaml.Node {
	if len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

var yamlLine = regexp.MustCompile(`^(yaml: )?(line \d+: )?`)

// syntaxError places an error of the YAML parser. yaml.v3 names the line
// where the enclosing block starts, or none (a byte it refuses); the line
// at fault is the first whose addition makes the text fail with the same
// message. Parsing stops at the error, so every longer prefix fails too,
// and a binary search over the prefixes finds it.
func syntaxError(file string, data []byte, err error) error {
	msg := yamlLine.ReplaceAllString(err.Error(), "")
	var ends []int // ends[k]: the length of the first k+1 lines
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	line := 1 + sort.Search(len(ends), func(k int) bool {
		err := parseAll(data[:ends[k]])
		return err != nil && yamlLine.ReplaceAllString(err.Error(), "") == msg
	})
	return &lineError{File: file, Line: min(line, max(len(ends), 1)), Msg: strings.TrimSpace(msg)}
}

// parseAll parses every document of data into nodes.
func parseAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
