package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// LoadFile reads and parses a config file. Errors name the file as given here.
// (It is not called Load: that name is the load section's type.)
func LoadFile(filename string) (*Config, error) {
	data, err := os.ReadFile(filename)
	if err != nil {
		return nil, err
	}
	return Parse(filename, data)
}

// Parse decodes and validates a config. filename names the file in errors
// and is where relative paths (body_file, the client's *_file settings) are
// resolved from. Every problem found is returned, joined with errors.Join,
// one "file:line: path: message" per line, in file order.
func Parse(filename string, data []byte) (*Config, error) {
	// The node tree, kept so that every error can name a line.
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, otherError(filename, data, nil, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		if n := content(&extra); n != nil && !(n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
			return nil, joinSorted([]*Error{{File: filename, Line: n.Line, Msg: "a config file holds one YAML document, found a second"}})
		}
	} else if !errors.Is(err, io.EOF) {
		return nil, otherError(filename, data, nil, err)
	}

	cfg := DefaultConfig
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, decodeErrors(filename, data, &doc, err)
	}

	dir := filepath.Dir(filename)
	v := &validator{}
	// yaml.v3 drops a null list element ("-" alone, "~"): a probe, a phase
	// or a level would vanish without a word. As the later elements then
	// move up, validation (whose paths count the decoded elements) waits
	// until there are none.
	for _, n := range index(&doc) {
		if n.isKey || len(n.path) == 0 || n.node.Kind != yaml.ScalarNode || n.node.ShortTag() != "!!null" {
			continue
		}
		if _, elem := n.path[len(n.path)-1].(int); elem {
			v.errorf(n.path, "empty list element")
		}
	}
	if len(v.issues) == 0 {
		v.config(&cfg, dir)
	}
	if len(v.issues) == 0 {
		return &cfg, nil
	}
	errs := make([]*Error, len(v.issues))
	for i, is := range v.issues {
		errs[i] = &Error{File: filename, Line: lineOf(&doc, is.at), Path: is.path.String(), Msg: is.msg}
	}
	return nil, joinSorted(errs)
}

// errorf records a problem at p.
func (v *validator) errorf(p keyPath, format string, args ...any) {
	v.issues = append(v.issues, issue{path: p, at: p, msg: fmt.Sprintf(format, args...)})
}

// errorAt records a problem reported at p but located (for its line) at at.
func (v *validator) errorAt(p, at keyPath, format string, args ...any) {
	v.issues = append(v.issues, issue{path: p, at: at, msg: fmt.Sprintf(format, args...)})
}
