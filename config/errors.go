package config

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/loadprobe/loadprobe/plan"
)

// lineError is one problem in a config file. LoadFile and Parse return
// every one they find, joined with errors.Join in file order; errors.As finds
// the first.
type lineError struct {
	File string // the file name as given to LoadFile or Parse
	Line int    // 1-based line of the offending key or list element
	Path string // key path, e.g. probes[2].load.concurrency; empty for the whole file
	Msg  string
}

// Error formats e as "file:line: path: message".
func (e *lineError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Path != "" {
		s += ": " + e.Path
	}
	return s + ": " + e.Msg
}

// maxErrors caps the errors reported: past it a config is wrong as a
// whole, and a list of thousands of lines helps nobody.
const maxErrors = 20

// keyPath is a path to a node: string keys and int list indices.
type keyPath []any

func (p keyPath) String() string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// to returns a new path, p followed by segs.
func (p keyPath) to(segs ...any) keyPath {
	return append(p[:len(p):len(p)], segs...)
}

// issue is one problem: the path reported, its line, the message.
type issue struct {
	path string
	line int
	msg  string
}

// validator collects every problem of a config, decoding and validation alike.
type validator struct {
	issues []issue
	// lines holds the line of every key and list element decoded, by path.
	lines map[string]int
	// failed holds the paths whose value could not be decoded: validation
	// says nothing about them or below them, it would only echo the error.
	failed []string
	// rows holds the data files read, by file and content, the running
	// config's among them: a reload takes an unchanged file's rows from it
	// (docs/templates.md, "Data").
	rows map[keptData]*plan.Rows
	// sets holds the descriptor sets this config names, by content; running
	// those of the config in force, to take an unchanged one from.
	sets, running map[[sha256.Size]byte]*protoregistry.Files
	// endpoints holds each URL's endpoint (endpoint.go) by scheme and host,
	// so that a name is resolved once per load, however many guards and
	// probes name it.
	endpoints map[string]endpoint
	// parts holds what validation read and compiled of each request, for
	// compile to build the probe's plan from.
	parts map[*Request]*requestParts
}

// newValidator returns a validator of a config that replaces running (nil:
// none), whose data files it takes the rows of when they have not changed.
func newValidator(running *Config) *validator {
	v := &validator{lines: map[string]int{}, rows: map[keptData]*plan.Rows{}, parts: map[*Request]*requestParts{},
		sets: map[[sha256.Size]byte]*protoregistry.Files{}, endpoints: map[string]endpoint{}}
	if running != nil {
		for key, rows := range running.rows {
			v.rows[key] = rows
		}
		v.running = running.sets
	}
	return v
}

// keptData names a data file's rows: its path and the SHA-256 of its text.
type keptData struct {
	file string
	sum  [sha256.Size]byte
}

func (v *validator) report(path string, line int, msg string) {
	v.issues = append(v.issues, issue{path: path, line: line, msg: msg})
}

// fail records a value that could not be decoded.
func (v *validator) fail(p keyPath, line int, format string, args ...any) {
	v.report(p.String(), line, fmt.Sprintf(format, args...))
	v.failed = append(v.failed, p.String())
}

// errorf records a problem found by validation at p.
func (v *validator) errorf(p keyPath, format string, args ...any) {
	v.errorAt(p, p, format, args...)
}

// errorAt records a problem reported at p but located (for its line) at at,
// e.g. the list element at fault.
func (v *validator) errorAt(p, at keyPath, format string, args ...any) {
	if !v.undecoded(at) {
		v.report(p.String(), v.lineOf(at), fmt.Sprintf(format, args...))
	}
}

// undecoded reports whether the value at one of paths, or above it, could
// not be decoded: its error is said already.
func (v *validator) undecoded(paths ...keyPath) bool {
	for _, at := range paths {
		s := at.String()
		for _, f := range v.failed {
			if s == f || strings.HasPrefix(s, f) && (f == "" || s[len(f)] == '.' || s[len(f)] == '[') {
				return true
			}
		}
	}
	return false
}

// lineOf returns the line of the deepest node of at that was decoded.
func (v *validator) lineOf(at keyPath) int {
	for i := len(at); i >= 0; i-- {
		if line, ok := v.lines[at[:i].String()]; ok {
			return line
		}
	}
	return 1
}

// err returns the issues as one error in file order, at most maxErrors
// lines and one that says how many more there are.
func (v *validator) err(file string) error {
	if len(v.issues) == 0 {
		return nil
	}
	slices.SortStableFunc(v.issues, func(a, b issue) int { return a.line - b.line })
	var errs []error
	for i, is := range v.issues {
		if i == maxErrors {
			// A summary, not a place in the file: no file:line.
			errs = append(errs, fmt.Errorf("and %d more errors", len(v.issues)-i))
			break
		}
		errs = append(errs, &lineError{File: file, Line: is.line, Path: is.path, Msg: is.msg})
	}
	return errors.Join(errs...)
}
