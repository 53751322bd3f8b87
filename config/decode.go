package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/plan"
)

// decoder fills a value from a yaml.Node tree by walking the tree along the
// Go type, so that every problem is found at its node (with its line) and
// one bad value never hides the others. yaml.v3 decodes each scalar, with a
// type's own UnmarshalYAML (a duration, a TLS version) when it has one; the
// walk adds what decoding a whole document stops at: unknown and duplicate
// keys, and values of the wrong kind. Structs are walked key by key even
// when they have an UnmarshalYAML of their own (prometheus/common's client
// settings): validation runs the checks those would run.
type decoder struct {
	v      *validator
	budget int // nodes left to visit: aliases and merges cannot expand without bound
}

// newDecoder returns a decoder for the document whose top node is top. It
// visits at most 20 times as many nodes as the document holds: enough for
// any honest use of anchors, and a bound on a "billion laughs" of aliases.
func newDecoder(v *validator, top *yaml.Node) *decoder {
	var count func(*yaml.Node) int
	count = func(n *yaml.Node) int {
		c := 1
		for _, k := range n.Content {
			c += count(k)
		}
		return c
	}
	return &decoder{v: v, budget: 1000 + 20*count(top)}
}

// spend counts one node visited; false once the budget is spent, which
// fails the whole document.
func (d *decoder) spend(line int) bool {
	if d.budget--; d.budget == -1 {
		d.v.fail(nil, line, "aliases expand the document too far")
	}
	return d.budget >= 0
}

// defaults holds the value a list element or an optional section starts
// from, by type: a key the file leaves out keeps its default.
var defaults = map[reflect.Type]func() any{
	reflect.TypeFor[Probe]():                func() any { return DefaultProbe },
	reflect.TypeFor[FlowStep]():             func() any { return defaultFlowStep },
	reflect.TypeFor[plan.PrometheusGuard](): func() any { return defaultPrometheusGuard },
	reflect.TypeFor[plan.GuardQuery]():      func() any { return defaultGuardQuery },
	reflect.TypeFor[plan.Telemetry]():       func() any { return defaultTelemetry },
	reflect.TypeFor[plan.Resource]():        func() any { return defaultResource },
	reflect.TypeFor[Compare]():              func() any { return defaultCompare },
	reflect.TypeFor[plan.Search]():          func() any { return defaultSearch },
	reflect.TypeFor[GRPC]():                 func() any { return defaultGRPC },
	reflect.TypeFor[GRPCStream]():           func() any { return defaultGRPCStream },
}

// scalarForm is a mapping that may also be written as one scalar.
type scalarForm interface{ fromScalar(*yaml.Node) error }

var scalarFormType = reflect.TypeFor[scalarForm]()

var unmarshalers = []reflect.Type{
	reflect.TypeFor[yaml.Unmarshaler](),
	reflect.TypeFor[interface{ UnmarshalYAML(func(any) error) error }](),
}

// decode fills out (addressable) from n, the node at p. A null leaves out
// as it is: an absent value keeps its default.
func (d *decoder) decode(n *yaml.Node, out reflect.Value, p keyPath) {
	line := n.Line // an alias's own line, not its anchor's
	if n = deref(n); !d.spend(line) || n.ShortTag() == "!!null" {
		return
	}
	t := out.Type()
	own := slices.ContainsFunc(unmarshalers, reflect.PointerTo(t).Implements)
	switch {
	case t.Kind() == reflect.Pointer:
		if out.IsNil() {
			out.Set(reflect.New(t.Elem()))
			if def, ok := defaults[t.Elem()]; ok {
				out.Elem().Set(reflect.ValueOf(def()))
			}
		}
		d.decode(n, out.Elem(), p)
	case n.Kind == yaml.ScalarNode && reflect.PointerTo(t).Implements(scalarFormType):
		// A mapping that has a short form (think: 100ms).
		if err := out.Addr().Interface().(scalarForm).fromScalar(n); err != nil {
			d.v.fail(p, line, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
	case t.Kind() == reflect.Struct && len(keys(t)) > 0:
		d.mapping(n, line, p, keys(t), func(key string, val *yaml.Node, kp keyPath) bool {
			idx, ok := keys(t)[key]
			if ok {
				d.decode(val, out.FieldByIndex(idx), kp)
			}
			return ok
		})
	case t.Kind() == reflect.Struct && !own && t.NumField() == 1 && t.Field(0).Type.Kind() == reflect.Map:
		d.decode(n, out.Field(0), p) // a struct around an inlined map (http_headers)
	case t.Kind() == reflect.Map:
		if out.IsNil() {
			out.Set(reflect.MakeMap(t))
		}
		d.mapping(n, line, p, nil, func(key string, val *yaml.Node, kp keyPath) bool {
			elem := reflect.New(t.Elem()).Elem()
			d.decode(val, elem, kp)
			out.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), elem)
			return true
		})
	case t.Kind() == reflect.Slice:
		d.list(n, line, out, p)
	case n.Kind != yaml.ScalarNode && t.Kind() != reflect.Interface:
		d.v.fail(p, line, "expected %s, got %s", expected(t, own), describe(n))
	default:
		var te *yaml.TypeError
		if err := n.Decode(out.Addr().Interface()); errors.As(err, &te) {
			d.v.fail(p, line, "expected %s, got %s", expected(t, own), describe(n))
		} else if err != nil {
			d.v.fail(p, line, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
	}
}

// list decodes a sequence. Each probe starts from DefaultProbe. A bad
// element of a list of scalars spoils the whole list for validation
// (levels are checked as a sequence), and its first error speaks for the
// rest; a bad probe or phase spoils only itself.
func (d *decoder) list(n *yaml.Node, line int, out reflect.Value, p keyPath) {
	if n.Kind != yaml.SequenceNode {
		hint := ""
		if n.Kind == yaml.ScalarNode && len(n.Value) <= 80 && strings.Contains(n.Value, ",") && !strings.ContainsAny(n.Value, "\n[]") {
			hint = " (write it as [" + n.Value + "])"
		}
		d.v.fail(p, line, "expected a list, got %s%s", describe(n), hint)
		return
	}
	t := out.Type()
	s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
	first, more := -1, []string{} // the list's first bad scalar's issue, and the others'
	for i, c := range n.Content {
		ep := p.to(i)
		d.v.lines[ep.String()] = c.Line
		if def, ok := defaults[t.Elem()]; ok {
			s.Index(i).Set(reflect.ValueOf(def()))
		}
		failed, issues := len(d.v.failed), len(d.v.issues)
		if c.ShortTag() == "!!null" {
			// yaml.v3 would drop it, and a probe or a level would vanish.
			d.v.fail(ep, c.Line, "empty list element")
		} else {
			d.decode(c, s.Index(i), ep)
		}
		if len(d.v.failed) == failed || t.Elem().Kind() == reflect.Struct {
			continue
		}
		if first < 0 {
			first = issues
			d.v.failed = append(d.v.failed, p.String())
			continue
		}
		d.v.issues = d.v.issues[:issues] // one error says the list is wrong
		more = append(more, fmt.Sprintf("[%d]", i))
	}
	if len(more) > 0 {
		d.v.issues[first].msg += fmt.Sprintf(" (and at %s)", strings.Join(more, ", "))
	}
	out.Set(s)
}

// mapping walks the keys of mapping n: merged mappings (<<) first, so that
// the keys written here override them. each decodes one value and reports
// false for an unknown key; known are the keys to suggest from.
func (d *decoder) mapping(n *yaml.Node, line int, p keyPath, known map[string][]int, each func(string, *yaml.Node, keyPath) bool) {
	if n.Kind != yaml.MappingNode {
		d.v.fail(p, line, "expected a mapping, got %s", describe(n))
		return
	}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, m := n.Content[i], deref(n.Content[i+1]); k.Tag == "!!merge" && d.spend(k.Line) {
			merged := []*yaml.Node{m}
			if m.Kind == yaml.SequenceNode {
				merged = slices.Clone(m.Content) // the first one listed wins: apply it last
				slices.Reverse(merged)
			}
			for _, m := range merged {
				d.mapping(deref(m), m.Line, p, known, each)
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, kp := n.Content[i], p.to(n.Content[i].Value)
		if line, dup := first[k.Value]; dup {
			d.v.report(p.String(), k.Line, fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, line))
			d.v.failed = append(d.v.failed, kp.String())
			continue
		} else if k.Tag == "!!merge" {
			continue
		}
		first[k.Value], d.v.lines[kp.String()] = k.Line, k.Line
		if each(k.Value, n.Content[i+1], kp) {
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

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	return n
}

var keyCache sync.Map // reflect.Type to map[string][]int

// keys maps the YAML keys of struct t to their fields' index paths,
// inlined structs included.
func keys(t reflect.Type) map[string][]int {
	if k, ok := keyCache.Load(t); ok {
		return k.(map[string][]int)
	}
	k := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case opts == "inline" && f.Type.Kind() == reflect.Struct:
			for key, idx := range keys(f.Type) {
				k[key] = append([]int{i}, idx...)
			}
		case f.IsExported() && name != "-" && name != "":
			k[name] = []int{i}
		}
	}
	keyCache.Store(t, k)
	return k
}

// suggest returns the key closest to name (Levenshtein distance), when
// one is close: about one typo per three letters.
func suggest(name string, known map[string][]int) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, k := range slices.Sorted(maps.Keys(known)) {
		if len(name) > 64 {
			break
		}
		prev, cur := make([]int, len(k)+1), make([]int, len(k)+1)
		for j := range prev {
			prev[j] = j
		}
		for i := 1; i <= len(name); i++ {
			cur[0] = i
			for j := 1; j <= len(k); j++ {
				cost := 1
				if name[i-1] == k[j-1] {
					cost = 0
				}
				cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			}
			prev, cur = cur, prev
		}
		if d := prev[len(k)]; d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// expected names what a Go type takes in YAML. A type with its own
// UnmarshalYAML (a duration, a secret, a URL) takes a string.
func expected(t reflect.Type, own bool) string {
	switch k := t.Kind(); {
	case own:
	case k >= reflect.Int && k <= reflect.Uint64:
		return "an integer"
	case k == reflect.Float32 || k == reflect.Float64:
		return "a number"
	case k == reflect.Bool:
		return "true or false"
	}
	return "a string"
}

var tagNames = map[string]string{
	"!!str": "a string", "!!int": "an integer", "!!float": "a number", "!!bool": "a boolean",
	"!!map": "a mapping", "!!seq": "a list", "!!timestamp": "a timestamp", "!!binary": "binary data",
}

// describe names what a node holds, with a scalar's value (its first 40 characters).
func describe(n *yaml.Node) string {
	kind, ok := tagNames[n.ShortTag()]
	if !ok {
		kind = "a value tagged " + n.ShortTag()
	}
	if n.Kind != yaml.ScalarNode {
		return kind
	}
	if r := []rune(n.Value); len(r) > 40 {
		return kind + " " + strconv.Quote(string(r[:40])+"...")
	}
	return kind + " " + strconv.Quote(n.Value)
}
