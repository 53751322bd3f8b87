package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Error is one problem in a config file. Load and Parse return every Error
// they find, joined with errors.Join in file order; errors.As finds the first.
type Error struct {
	File string // the file name as given to Load or Parse
	Line int    // 1-based line of the offending key or list element
	Path string // key path, e.g. probes[2].load.concurrency; empty for the whole file
	Msg  string
}

// Error formats e as "file:line: path: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

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

// issue is one problem found by validation: path is reported, at locates
// the line (it may be longer than path, e.g. the list element at fault).
type issue struct {
	path, at keyPath
	msg      string
}

// lineOf returns the line of the node at p: a key's line for a key, an
// element's line for a list element. When part of p is absent it returns
// the line of the deepest node that exists.
func lineOf(doc *yaml.Node, p keyPath) int {
	line := 1
	n := content(doc)
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	for _, seg := range p {
		n = deref(n)
		if n == nil {
			return line
		}
		switch seg := seg.(type) {
		case string:
			k, v := lookup(n, seg, 0)
			if k == nil {
				return line
			}
			line, n = k.Line, v
		case int:
			if n.Kind != yaml.SequenceNode || seg < 0 || seg >= len(n.Content) {
				return line
			}
			n = n.Content[seg]
			line = n.Line
		}
	}
	return line
}

// content returns the top node of a document.
func content(doc *yaml.Node) *yaml.Node {
	if doc != nil && doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		return doc.Content[0]
	}
	return doc
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// lookup finds key in mapping n, then in the mappings merged into it by <<.
func lookup(n *yaml.Node, key string, depth int) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode || depth > 8 {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i].Kind == yaml.ScalarNode {
			return n.Content[i], n.Content[i+1]
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" {
			continue
		}
		m := deref(n.Content[i+1])
		if m == nil {
			continue
		}
		merged := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			merged = m.Content
		}
		for _, m := range merged {
			if k, v := lookup(deref(m), key, depth+1); k != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

// indexed is a node with its path, as found by walking the tree.
type indexed struct {
	node  *yaml.Node
	path  keyPath // for a key: the path of the mapping holding it
	isKey bool
}

// index lists every node of the tree in document order, without following
// aliases (an alias bomb stays small).
func index(doc *yaml.Node) []indexed {
	var out []indexed
	var walk func(n *yaml.Node, p keyPath)
	walk = func(n *yaml.Node, p keyPath) {
		if n == nil {
			return
		}
		out = append(out, indexed{node: n, path: p})
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				out = append(out, indexed{node: k, path: p, isKey: true})
				walk(n.Content[i+1], p.to(k.Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, p.to(i))
			}
		}
	}
	walk(content(doc), nil)
	return out
}

var (
	reLine       = regexp.MustCompile(`^line (\d+): (?s)(.*)$`)
	reNotFound   = regexp.MustCompile(`^field (.*) not found in type (?s).*$`)
	reAlreadySet = regexp.MustCompile(`^field (.*) already set in type (?s).*$`)
	reDuplicate  = regexp.MustCompile(`^mapping key ("(?:[^"\\]|\\.)*") already defined at line (\d+)$`)
	reUnmarshal  = regexp.MustCompile("^cannot unmarshal (\\S+)(?s)(?: `(.*)`)? into (.+)$")
)

// decodeErrors turns a yaml.v3 error into Errors of the form file:line: path: msg.
func decodeErrors(file string, data []byte, doc *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return otherError(file, data, doc, err)
	}
	byLine := map[int][]indexed{}
	var aliases []indexed
	if doc != nil {
		for _, n := range index(doc) {
			if n.node.Kind == yaml.AliasNode {
				aliases = append(aliases, n)
			} else {
				byLine[n.node.Line] = append(byLine[n.node.Line], n)
			}
		}
	}
	used := map[*yaml.Node]bool{} // aliases already blamed
	errs := make([]*Error, 0, len(te.Errors))
	for _, s := range te.Errors {
		e := &Error{File: file, Msg: s}
		if m := reLine.FindStringSubmatch(s); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = m[2]
			rewrite(e, byLine[e.Line], aliases, used)
		}
		errs = append(errs, e)
	}
	return joinSorted(errs)
}

// rewrite turns one of yaml.v3's strict-decoding messages into loadprobe's
// words; idx holds the nodes on the error's line, aliases every alias.
func rewrite(e *Error, idx, aliases []indexed, used map[*yaml.Node]bool) {
	findKey := func(name string) *indexed {
		for i := range idx {
			if idx[i].isKey && idx[i].node.Line == e.Line && idx[i].node.Value == name {
				return &idx[i]
			}
		}
		return nil
	}
	if m := reNotFound.FindStringSubmatch(e.Msg); m != nil {
		e.Msg = fmt.Sprintf("unknown key %q", m[1])
		if k := findKey(m[1]); k != nil {
			e.Path = k.path.String()
			if s := suggest(m[1], typeAt(reflect.TypeFor[Config](), k.path)); s != "" {
				e.Msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
		}
		return
	}
	if m := reAlreadySet.FindStringSubmatch(e.Msg); m != nil {
		e.Msg = fmt.Sprintf("duplicate key %q", m[1])
		if k := findKey(m[1]); k != nil {
			e.Path = k.path.String()
		}
		return
	}
	if m := reDuplicate.FindStringSubmatch(e.Msg); m != nil {
		name, err := strconv.Unquote(m[1])
		if err != nil {
			name = m[1]
		}
		e.Msg = fmt.Sprintf("duplicate key %q (first at line %s)", name, m[2])
		if k := findKey(name); k != nil {
			e.Path = k.path.String()
		}
		return
	}
	if m := reUnmarshal.FindStringSubmatch(e.Msg); m != nil {
		tag, value, goType := m[1], m[2], m[3]
		got := describeTag(tag)
		// Of the nodes on the line with that tag and value, the one that
		// decodes into that Go type, else the deepest: on "- name: [a]"
		// the list [a], not the probe list that starts on the same line.
		// An alias is decoded as the node it names, so the error names the
		// anchor's line; when the alias's place has that type, report the
		// alias instead.
		var best *indexed
		bestScore := -1
		consider := func(c *indexed, n *yaml.Node, alias bool) {
			if c.isKey || n == nil || n.Line != e.Line || n.ShortTag() != tag && n.Tag != tag {
				return
			}
			if n.Kind == yaml.ScalarNode && !strings.HasPrefix(n.Value, strings.TrimSuffix(value, "...")) {
				return
			}
			score := len(c.path)
			if typeMatches(typeAt(reflect.TypeFor[Config](), c.path), goType) {
				score += 1 << 20
			} else if alias {
				return
			}
			if score > bestScore {
				best, bestScore = c, score
			}
		}
		for i := range idx {
			consider(&idx[i], idx[i].node, false)
		}
		for i := range aliases {
			if !used[aliases[i].node] {
				consider(&aliases[i], aliases[i].node.Alias, true)
			}
		}
		if best != nil {
			e.Path = best.path.String()
			value = deref(best.node).Value
			if best.node.Kind == yaml.AliasNode {
				e.Line = best.node.Line
				used[best.node] = true
			}
		}
		if value != "" && tag != "!!seq" && tag != "!!map" {
			got += " " + strconv.Quote(truncate(value, 40))
		}
		e.Msg = fmt.Sprintf("expected %s, got %s", describeGoType(goType), got)
	}
}

// typeMatches reports whether yaml.v3 names t as goType in its messages;
// the sections decode through local types called plain.
func typeMatches(t reflect.Type, goType string) bool {
	if t == nil {
		return false
	}
	if t.String() == goType {
		return true
	}
	return t.Kind() == reflect.Struct && (strings.HasSuffix(goType, ".plain") || strings.HasPrefix(goType, "struct {"))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func describeTag(tag string) string {
	switch tag {
	case "!!str":
		return "a string"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!map":
		return "a mapping"
	case "!!seq":
		return "a list"
	case "!!timestamp":
		return "a timestamp"
	case "!!binary":
		return "binary data"
	}
	return "a value tagged " + tag
}

func describeGoType(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	}
	// Maps and structs (the sections decode through "plain" types).
	return "a mapping"
}

// otherError places an error that yaml.v3 gave without a line: a syntax
// error ("yaml: line 3: ...") names it; a value that its own UnmarshalYAML
// rejected (a duration, a TLS version, a proxy URL) is found by decoding the
// tree piece by piece until that error comes back.
func otherError(file string, data []byte, doc *yaml.Node, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: file, Msg: msg}
	if m := reLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
		if doc == nil {
			e.Line = syntaxLine(data, e.Line, e.Msg)
		}
		return joinSorted([]*Error{e})
	}
	if doc != nil {
		if p, n, lerr := locate(content(doc), reflect.TypeFor[Config](), nil, 0); lerr != nil {
			e.Path = p.String()
			e.Line = lineOf(doc, p)
			if n != nil && n.Line > 0 && len(p) == 0 {
				e.Line = n.Line
			}
			e.Msg = strings.TrimPrefix(lerr.Error(), "yaml: ")
			return joinSorted([]*Error{e})
		}
	}
	e.Line = badByteLine(data)
	return joinSorted([]*Error{e})
}

// syntaxLine finds the line of a syntax error. yaml.v3 names the line where
// the enclosing block starts (0-based for parser errors), not the line at
// fault. The line at fault is the first one whose addition makes the text
// fail with the same message: parsing stops at the error, so every longer
// prefix fails alike, which lets a binary search find it.
func syntaxLine(data []byte, reported int, msg string) int {
	var ends []int // ends[k-1]: offset after line k
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	fails := func(k int) bool {
		err := parseAll(data[:ends[k-1]])
		if err == nil {
			return false
		}
		m := reLine.FindStringSubmatch(strings.TrimPrefix(err.Error(), "yaml: "))
		return m != nil && m[2] == msg
	}
	lo, hi := max(reported, 1)-1, len(ends) // fails(lo) is taken as false, fails(hi) must be true
	if hi <= lo || len(data) > 1<<20 || !fails(hi) {
		return max(reported, 1)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
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

// badByteLine returns the line of the first byte YAML refuses (invalid UTF-8
// or a control character), or 1: the reader's errors carry no line.
func badByteLine(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return line
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return 1
}

var (
	obsoleteUnmarshaler = reflect.TypeFor[interface{ UnmarshalYAML(func(any) error) error }]()
	nodeUnmarshaler     = reflect.TypeFor[yaml.Unmarshaler]()
)

// locate finds the deepest node below n whose own decoding into t fails,
// children first, in document order. Type errors are passed over: the
// error being looked for is one yaml.v3 could not place itself.
func locate(n *yaml.Node, t reflect.Type, p keyPath, depth int) (keyPath, *yaml.Node, error) {
	if n == nil || t == nil || depth > 32 {
		return nil, nil, nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			var ft reflect.Type
			switch t.Kind() {
			case reflect.Struct:
				ft = fieldsOf(t)[k.Value]
			case reflect.Map:
				ft = t.Elem()
			}
			if rp, rn, err := locate(v, ft, p.to(k.Value), depth+1); err != nil {
				return rp, rn, err
			}
		}
	case yaml.SequenceNode:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, c := range n.Content {
				if rp, rn, err := locate(c, t.Elem(), p.to(i), depth+1); err != nil {
					return rp, rn, err
				}
			}
		}
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(obsoleteUnmarshaler) || pt.Implements(nodeUnmarshaler) {
		var te *yaml.TypeError
		if err := n.Decode(reflect.New(t).Interface()); err != nil && !errors.As(err, &te) {
			return p, n, err
		}
	}
	return nil, nil, nil
}

// fieldsOf maps the YAML keys of struct t to their types, inlined fields included.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var add func(t reflect.Type, depth int)
	add = func(t reflect.Type, depth int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			tag := f.Tag.Get("yaml")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(opts, "inline") {
				if f.Type.Kind() == reflect.Struct && depth < 8 {
					add(f.Type, depth+1)
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			out[name] = f.Type
		}
	}
	add(t, 0)
	return out
}

// typeAt returns the Go type that the node at p decodes into, or nil.
func typeAt(t reflect.Type, p keyPath) reflect.Type {
	for _, seg := range p {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil {
			return nil
		}
		switch seg := seg.(type) {
		case string:
			switch t.Kind() {
			case reflect.Struct:
				t = fieldsOf(t)[seg]
			case reflect.Map:
				t = t.Elem()
			default:
				return nil
			}
		case int:
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return nil
			}
			t = t.Elem()
		}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// suggest returns the key of struct t closest to name, when one is close.
func suggest(name string, t reflect.Type) string {
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	keys := make([]string, 0, 16)
	for k := range fieldsOf(t) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Accept about one typo per three letters.
	best, bestD := "", max(1, len(name)/3)+1
	for _, k := range keys {
		if d := distance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b (bytes).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// joinSorted joins errs in file order (by line, stable).
func joinSorted(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}
