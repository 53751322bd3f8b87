package result

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// docRow is a row of docs/results.md's field table: | `a`, `b` | meaning |.
var docRow = regexp.MustCompile("(?m)^\\| (`[^|]+`) \\| (.+) \\|$")

// readResultsDoc maps each field path the table names (steps[].level) to
// the text of its row. A row's first cell lists paths; a bare name after
// the first takes the first one's parent ("`steps[].level`, `name`").
func readResultsDoc(t *testing.T) map[string]string {
	t.Helper()
	text, err := os.ReadFile("../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range docRow.FindAllStringSubmatch(string(text), -1) {
		prefix := ""
		for i, name := range strings.Split(m[1], ",") {
			name = strings.Trim(strings.TrimSpace(name), "`")
			if i == 0 {
				prefix = name[:strings.LastIndex(name, ".")+1]
			} else if !strings.Contains(name, ".") {
				name = prefix + name
			}
			rows[name] = m[2]
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/results.md has no field table rows")
	}
	return rows
}

// shapes are the types whose JSON another type writes.
var shapes = map[reflect.Type]reflect.Type{reflect.TypeFor[Model](): reflect.TypeFor[modelJSON]()}

// jsonFields calls found with the path of every key the JSON of t can hold,
// parents before children, each type's keys at the first path that holds
// it (seen). Maps, and types that write themselves as one value (a time, a
// code's counts), are leaves.
func jsonFields(t reflect.Type, parent string, seen map[reflect.Type]bool, found func(path string)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := shapes[t]; ok {
		t = s
	}
	switch {
	case t.Kind() == reflect.Slice:
		jsonFields(t.Elem(), parent+"[]", seen, found)
		return
	case t.Kind() != reflect.Struct, t.Implements(reflect.TypeFor[json.Marshaler]()), seen[t]:
		return
	}
	seen[t] = true
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := name
		if parent != "" {
			path = parent + "." + name
		}
		found(path)
		jsonFields(f.Type, path, seen, found)
	}
}

// docs/results.md describes every key a result's JSON can hold: a field of
// the run or of a step has a row of its own; a field of an object within
// them has its row, or is named in the row of the nearest field that has one.
func TestResultsReferenceNamesEveryField(t *testing.T) {
	rows := readResultsDoc(t)
	jsonFields(reflect.TypeFor[Result](), "", map[reflect.Type]bool{}, func(path string) {
		if _, ok := rows[path]; ok {
			return
		}
		if _, ok := rows[path+"[]"]; ok {
			return
		}
		key := path[strings.LastIndex(path, ".")+1:]
		parent := strings.TrimSuffix(path, "."+key)
		if parent == path || strings.Count(path, ".") == 1 && strings.HasPrefix(path, "steps[].") {
			t.Errorf("docs/results.md has no row for `%s`", path)
			return
		}
		for ; parent != ""; parent = parent[:max(strings.LastIndex(parent, "."), 0)] {
			row, ok := rows[parent]
			if !ok {
				row, ok = rows[strings.TrimSuffix(parent, "[]")]
			}
			if ok {
				if !strings.Contains(row, "`"+key+"`") {
					t.Errorf("docs/results.md names `%s` neither in a row of its own nor in the row of `%s`", path, parent)
				}
				return
			}
		}
		t.Errorf("docs/results.md has no row for `%s` or a parent of it", path)
	})
}
