package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// decoder fills a value from a yaml.Node tree by walking the tree along the
// Go type, so that every problem is found at its node (with its line) and
// one bad value never hides the others. It decodes each scalar with yaml.v3
// itself; the walk adds what decoding a whole document would stop at: unknown
// and duplicate keys, wrong kinds, and errors of a value's own UnmarshalYAML
// (a duration, a TLS version), each reported where it is.
type decoder struct {
	v      *validator
	budget int // nodes left to visit: aliases and merges cannot expand without bound
}

// newDecoder returns a decoder for the document whose top node is n. It
// visits at most 20 times as many nodes as the document holds: enough for
// any honest use of anchors, and a bound on a "billion laughs" of aliases.
func newDecoder(v *validator, n *yaml.Node) *decoder {
	var count func(*yaml.Node) int
	count = func(n *yaml.Node) int {
		c := 1
		for _, k := range n.Content {
			c += count(k)
		}
		return c
	}
	return &decoder{v: v, budget: 1000 + 20*count(n)}
}

// spend counts one node visited; false once the budget is spent.
func (d *decoder) spend(p keyPath, line int) bool {
	if d.budget--; d.budget == -1 {
		d.v.fail(p, line, "aliases expand the document too far")
	}
	return d.budget >= 0
}

var (
	unmarshalerType    = reflect.TypeFor[yaml.Unmarshaler]()
	oldUnmarshalerType = reflect.TypeFor[interface{ UnmarshalYAML(func(any) error) error }]()
)

// decode fills out (addressable) from n, the node at p.
func (d *decoder) decode(n *yaml.Node, out reflect.Value, p keyPath) {
	line := n.Line // an alias's, not its anchor's
	for i := 0; n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	if !d.spend(p, line) {
		return
	}
	if n.ShortTag() == "!!null" {
		return // an absent value: the default stays
	}
	t := out.Type()
	pt := reflect.PointerTo(t)
	own := pt.Implements(unmarshalerType) || pt.Implements(oldUnmarshalerType)
	switch {
	case t.Kind() == reflect.Pointer:
		if out.IsNil() {
			out.Set(reflect.New(t.Elem()))
		}
		d.decode(n, out.Elem(), p)
	case t.Kind() == reflect.Struct && inlineMap(t) >= 0:
		d.decode(n, out.Field(inlineMap(t)), p) // http_headers: a map in a struct
	case t.Kind() == reflect.Struct && len(keysOf(t)) > 0:
		// A struct with YAML keys is walked key by key, even when it has
		// an UnmarshalYAML: validation calls the checks that would run.
		d.mapping(n, line, p, keysOf(t), func(key string, val *yaml.Node, kp keyPath) bool {
			f, ok := fieldByKey(out, key)
			if ok {
				d.decode(val, f, kp)
			}
			return ok
		})
	case t.Kind() == reflect.Map && !own:
		if out.IsNil() {
			out.Set(reflect.MakeMap(t))
		}
		d.mapping(n, line, p, nil, func(key string, val *yaml.Node, kp keyPath) bool {
			elem := reflect.New(t.Elem()).Elem()
			d.decode(val, elem, kp)
			out.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), elem)
			return true
		})
	case t.Kind() == reflect.Slice && !own:
		d.list(n, out, p, line)
	default:
		d.scalar(n, out, p, own, line)
	}
}

// list decodes a sequence. A bad element of a list of scalars spoils the
// whole list for validation (levels are checked as a sequence); a bad
// probe or phase spoils only itself.
func (d *decoder) list(n *yaml.Node, out reflect.Value, p keyPath, line int) {
	if n.Kind != yaml.SequenceNode {
		d.v.fail(p, line, "expected a list, got %s", describe(n))
		return
	}
	t := out.Type()
	s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
	for i, c := range n.Content {
		ep := p.to(i)
		d.v.lines[ep.String()] = c.Line
		if t.Elem() == reflect.TypeFor[Probe]() {
			s.Index(i).Set(reflect.ValueOf(DefaultProbe))
		}
		failed := len(d.v.failed)
		if c.ShortTag() == "!!null" {
			// yaml.v3 would drop it, and a probe or a level would vanish.
			d.v.fail(ep, c.Line, "empty list element")
		} else {
			d.decode(c, s.Index(i), ep)
		}
		if len(d.v.failed) > failed && t.Elem().Kind() != reflect.Struct {
			d.v.failed = append(d.v.failed, p.String())
		}
	}
	out.Set(s)
}

// scalar decodes a leaf value with yaml.v3, or with the type's own UnmarshalYAML.
func (d *decoder) scalar(n *yaml.Node, out reflect.Value, p keyPath, own bool, line int) {
	if n.Kind != yaml.ScalarNode && out.Kind() != reflect.Interface {
		d.v.fail(p, line, "expected %s, got %s", expected(out.Type(), own), describe(n))
		return
	}
	var te *yaml.TypeError
	if err := n.Decode(out.Addr().Interface()); errors.As(err, &te) {
		d.v.fail(p, line, "expected %s, got %s", expected(out.Type(), own), describe(n))
	} else if err != nil {
		d.v.fail(p, line, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
}

// mapping walks the keys of mapping n: merged mappings (<<) first, so that
// the keys written here override them. each decodes one value and reports
// false for an unknown key; known are the keys to suggest from.
func (d *decoder) mapping(n *yaml.Node, line int, p keyPath, known []string, each func(string, *yaml.Node, keyPath) bool) {
	if n.Kind != yaml.MappingNode {
		d.v.fail(p, line, "expected a mapping, got %s", describe(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag == "!!merge" {
			d.merge(n.Content[i+1], p, known, each)
		}
	}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			continue
		}
		kp := p.to(k.Value)
		if line, dup := first[k.Value]; dup {
			d.v.report(p.String(), k.Line, fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, line))
			d.v.failed = append(d.v.failed, kp.String())
			continue
		}
		first[k.Value] = k.Line
		d.v.lines[kp.String()] = k.Line
		if each(k.Value, val, kp) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q", k.Value)
		if s := suggest(k.Value, known); s != "" {
			// The key meant is absent: validation keeps quiet about it.
			msg += fmt.Sprintf(" (did you mean %q?)", s)
			d.v.failed = append(d.v.failed, p.to(s).String())
		}
		d.v.report(p.String(), k.Line, msg)
	}
}

// merge applies the mapping (or list of mappings) of a << key.
func (d *decoder) merge(n *yaml.Node, p keyPath, known []string, each func(string, *yaml.Node, keyPath) bool) {
	for i := 0; n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	if !d.spend(p, n.Line) {
		return
	}
	if n.Kind == yaml.SequenceNode {
		for _, m := range slices.Backward(n.Content) {
			d.merge(m, p, known, each)
		}
		return
	}
	d.mapping(n, n.Line, p, known, each)
}

// fieldByKey returns the field of struct v that YAML key names, looking
// into inlined structs.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case opts == "inline" && f.Type.Kind() == reflect.Struct:
			if fv, ok := fieldByKey(v.Field(i), key); ok {
				return fv, true
			}
		case f.IsExported() && name != "-" && (name == key || name == "" && strings.ToLower(f.Name) == key):
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// inlineMap returns the index of the inlined map of struct t, or -1.
func inlineMap(t reflect.Type) int {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Type.Kind() == reflect.Map && strings.HasSuffix(f.Tag.Get("yaml"), ",inline") {
			return i
		}
	}
	return -1
}

// keysOf lists the YAML keys of struct t, inlined structs included.
func keysOf(t reflect.Type) []string {
	if keys, ok := keyCache.Load(t); ok {
		return keys.([]string)
	}
	keys := structKeys(t)
	keyCache.Store(t, keys)
	return keys
}

var keyCache sync.Map // reflect.Type to its keys

func structKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case opts == "inline" && f.Type.Kind() == reflect.Struct:
			keys = append(keys, structKeys(f.Type)...)
		case f.IsExported() && name != "-" && name != "":
			keys = append(keys, name)
		}
	}
	return keys
}

// suggest returns the key closest to name, when one is close: about one
// typo per three letters.
func suggest(name string, keys []string) string {
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
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+boolInt(a[i-1] != b[j-1]))
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// expected names what a Go type takes in YAML. A type with its own
// UnmarshalYAML (a duration, a secret, a URL) takes a string.
func expected(t reflect.Type, own bool) string {
	switch {
	case own:
		return "a string"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Bool:
		return "true or false"
	}
	return "a string"
}

// describe names what a node holds, with a scalar's value.
func describe(n *yaml.Node) string {
	kind := map[string]string{
		"!!str": "a string", "!!int": "an integer", "!!float": "a number", "!!bool": "a boolean",
		"!!map": "a mapping", "!!seq": "a list", "!!timestamp": "a timestamp", "!!binary": "binary data",
	}[n.ShortTag()]
	if kind == "" {
		kind = "a value tagged " + n.ShortTag()
	}
	if n.Kind != yaml.ScalarNode {
		return kind
	}
	v := n.Value
	if len(v) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut] + "..."
	}
	return kind + " " + strconv.Quote(v)
}
