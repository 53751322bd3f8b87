// Package template compiles the request templates of a probe's url, header
// values and body (docs/templates.md, "Templates") once, when the
// config loads, into literal segments and value slots. Sending a request
// then appends the segments in order: no parsing, no lookup by name, and no
// allocation once the caller's buffer has grown to the request's size.
package template

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Context is where a template's text goes: it says how a slot's value is
// written there, so that a value (a data column, a captured token) can
// never break the request's framing.
type Context uint8

const (
	// Body values are written as they are.
	Body Context = iota
	// URL values have the bytes a request line cannot hold (space, control
	// characters, '#', non-ASCII) percent-encoded; a '%' is kept, so that a
	// value may come encoded already.
	URL
	// Header values have control characters (CR, LF above all) dropped.
	Header
)

// kind is what a segment writes.
type kind uint8

const (
	literal kind = iota
	index
	randomInt
	randomString
	uuid
	column   // a column of the probe's data
	captured // a value captured by an earlier step of a flow
)

// segment is one piece of a template: literal text, or a slot.
type segment struct {
	kind kind
	ctx  Context
	text string // literal
	a, b int64  // random_int's bounds; random_string's length in a
	slot int    // column or captured: its index in Vars
}

// Template is a compiled template. The zero Template writes nothing.
type Template struct {
	segs []segment
}

// Scope names the values a template may use: the columns of the probe's
// data and the values captured by the steps before it.
type Scope struct {
	Columns  []string
	Captured []string
}

// MaxRandomString bounds {{random_string N}} (and a script's random_string):
// a body is held in memory.
const MaxRandomString = 1 << 20

// Compile compiles text for ctx. An action is {{index}}, {{random_int A B}},
// {{random_string N}}, {{uuid}}, {{env "NAME"}} (read here, once: an unset
// variable is an error), {{.name}} (a column of the data or a captured
// value, as scope says) or a quoted string ({{"{{"}} writes "{{"). The error
// names the action at fault.
func Compile(text string, ctx Context, scope Scope) (*Template, error) {
	t := &Template{}
	for text != "" {
		open := strings.Index(text, "{{")
		if open < 0 {
			t.add(segment{kind: literal, text: text})
			break
		}
		if open > 0 {
			t.add(segment{kind: literal, text: text[:open]})
		}
		end := strings.Index(text[open:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("%q: unclosed action (no }})", clip(text[open:]))
		}
		action := text[open : open+end+2]
		seg, err := compileAction(strings.TrimSpace(action[2:len(action)-2]), scope)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", action, err)
		}
		seg.ctx = ctx
		t.add(seg)
		text = text[open+end+2:]
	}
	return t, nil
}

// add appends seg, joining adjacent literals.
func (t *Template) add(seg segment) {
	if seg.kind == literal {
		if seg.text == "" {
			return
		}
		if n := len(t.segs); n > 0 && t.segs[n-1].kind == literal {
			t.segs[n-1].text += seg.text
			return
		}
	}
	t.segs = append(t.segs, seg)
}

func compileAction(action string, scope Scope) (segment, error) {
	fields := strings.Fields(action)
	if len(fields) == 0 {
		return segment{}, errors.New("empty action")
	}
	name, args := fields[0], fields[1:]
	switch {
	case strings.HasPrefix(name, `"`):
		s, err := strconv.Unquote(action)
		if err != nil {
			return segment{}, errors.New("malformed quoted string")
		}
		return segment{kind: literal, text: s}, nil
	case strings.HasPrefix(name, "."):
		if len(args) > 0 {
			return segment{}, errors.New("a value takes no arguments")
		}
		return lookup(name[1:], scope)
	}
	arity := map[string]int{"index": 0, "uuid": 0, "random_int": 2, "random_string": 1, "env": 1}
	n, known := arity[name]
	if !known {
		return segment{}, fmt.Errorf("unknown function %q (known: index, random_int, random_string, uuid, env; a value is written .name)", name)
	}
	if len(args) != n {
		return segment{}, fmt.Errorf("%s takes %d arguments, got %d", name, n, len(args))
	}
	switch name {
	case "index":
		return segment{kind: index}, nil
	case "uuid":
		return segment{kind: uuid}, nil
	case "random_int":
		a, errA := strconv.ParseInt(args[0], 10, 64)
		b, errB := strconv.ParseInt(args[1], 10, 64)
		switch {
		case errA != nil || errB != nil:
			return segment{}, errors.New("random_int takes two integers")
		case a > b:
			return segment{}, fmt.Errorf("random_int: %d is above %d", a, b)
		}
		return segment{kind: randomInt, a: a, b: b}, nil
	case "random_string":
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > MaxRandomString {
			return segment{}, fmt.Errorf("random_string takes a length from 1 to %d", MaxRandomString)
		}
		return segment{kind: randomString, a: int64(n)}, nil
	default: // env
		key, err := strconv.Unquote(args[0])
		if err != nil {
			return segment{}, errors.New(`env takes a quoted name: {{env "NAME"}}`)
		}
		v, ok := os.LookupEnv(key)
		if !ok {
			return segment{}, fmt.Errorf("environment variable %s is not set", key)
		}
		return segment{kind: literal, text: v}, nil
	}
}

// lookup resolves a value's name: a data column first, then a captured value.
func lookup(name string, scope Scope) (segment, error) {
	for i, c := range scope.Columns {
		if c == name {
			return segment{kind: column, slot: i}, nil
		}
	}
	for i, c := range scope.Captured {
		if c == name {
			return segment{kind: captured, slot: i}, nil
		}
	}
	return segment{}, fmt.Errorf("%q is neither a column of data nor a value captured by an earlier step", name)
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Literal returns the text t always writes, and true, when t has no slot.
func (t *Template) Literal() (string, bool) {
	var b strings.Builder
	for _, s := range t.segs {
		if s.kind != literal {
			return "", false
		}
		b.WriteString(s.text)
	}
	return b.String(), true
}

// Concat returns the template that writes each of ts in turn; a nil one
// writes nothing. The client joins the request line, the headers and the
// body this way into one template for the whole request head.
func Concat(ts ...*Template) *Template {
	out := &Template{}
	for _, t := range ts {
		if t == nil {
			continue
		}
		for _, s := range t.segs {
			out.add(s)
		}
	}
	return out
}

// Text returns a template that writes s as it is.
func Text(s string) *Template {
	t := &Template{}
	t.add(segment{kind: literal, text: s})
	return t
}

// Placeholder returns the text of t with s for every slot: what the checks
// made at load (a URL's syntax, its host) look at.
func (t *Template) Placeholder(s string) string {
	var b strings.Builder
	for _, seg := range t.segs {
		if seg.kind == literal {
			b.WriteString(seg.text)
		} else {
			b.WriteString(s)
		}
	}
	return b.String()
}

// Prefix returns the literal text t starts with, up to its first slot.
func (t *Template) Prefix() string {
	if len(t.segs) > 0 && t.segs[0].kind == literal {
		return t.segs[0].text
	}
	return ""
}

// Rest returns the template of what t writes after Prefix.
func (t *Template) Rest() *Template {
	if len(t.segs) > 0 && t.segs[0].kind == literal {
		return &Template{segs: t.segs[1:]}
	}
	return t
}
