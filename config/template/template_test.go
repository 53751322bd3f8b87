package template

import (
	"regexp"
	"strings"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	t.Setenv("LOADPROBE_TEST_SET", "x")
	scope := Scope{Columns: []string{"user"}, Captured: []string{"token"}}
	for _, tc := range []struct{ text, want string }{
		{"/x/{{.usr}}", `{{.usr}}: "usr" is neither a column of data nor a value captured by an earlier step`},
		{"{{ index", `"{{ index": unclosed action (no }})`},
		{"{{}}", "{{}}: empty action"},
		{"{{nope}}", `{{nope}}: unknown function "nope" (known: index, random_int, random_string, uuid, env; a value is written .name)`},
		{"{{random_int 5 1}}", "{{random_int 5 1}}: random_int: 5 is above 1"},
		{"{{random_int 1}}", "{{random_int 1}}: random_int takes 2 arguments, got 1"},
		{"{{random_int a b}}", "{{random_int a b}}: random_int takes two integers"},
		{"{{random_string 0}}", "{{random_string 0}}: random_string takes a length from 1 to 1048576"},
		{"{{env NAME}}", `{{env NAME}}: env takes a quoted name: {{env "NAME"}}`},
		{`{{env "LOADPROBE_TEST_UNSET"}}`, `{{env "LOADPROBE_TEST_UNSET"}}: environment variable LOADPROBE_TEST_UNSET is not set`},
		{"{{.user x}}", "{{.user x}}: a value takes no arguments"},
	} {
		_, err := Compile(tc.text, Body, scope)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Compile(%q) = %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestRender(t *testing.T) {
	t.Setenv("LOADPROBE_TEST_SET", "s3cret")
	scope := Scope{Columns: []string{"user", "id"}, Captured: []string{"token"}}
	v := NewVars(1)
	v.Index = 42
	v.Row = tableOf([]string{"ann b#\r\n", "7"}).Row(0)
	v.Captured[0] = "tok\r\nX: y"
	for _, tc := range []struct {
		text string
		ctx  Context
		want string
	}{
		{"plain", Body, "plain"},
		{"/u/{{index}}/{{ .id }}", URL, "/u/42/7"},
		{"/u/{{.user}}", URL, "/u/ann%20b%23%0D%0A"},
		{"Bearer {{.token}}", Header, "Bearer tokX: y"},
		{`{"u":"{{.user}}"}`, Body, "{\"u\":\"ann b#\r\n\"}"},
		{`{{env "LOADPROBE_TEST_SET"}}-{{"{{"}}`, Body, "s3cret-{{"},
	} {
		tm, err := Compile(tc.text, tc.ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(tm.Append(nil, v)); got != tc.want {
			t.Errorf("%q renders %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestRandomValues(t *testing.T) {
	tm, err := Compile("{{random_int -2 2}} {{random_string 16}} {{uuid}}", Body, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	strRE := regexp.MustCompile(`^[A-Za-z0-9]{16}$`)
	ints, uuids := map[string]int{}, map[string]bool{}
	v := NewVars(0)
	for range 1000 {
		f := strings.Fields(string(tm.Append(nil, v)))
		ints[f[0]]++
		if !strRE.MatchString(f[1]) || !uuidRE.MatchString(f[2]) {
			t.Fatalf("random_string %q or uuid %q malformed", f[1], f[2])
		}
		uuids[f[2]] = true
	}
	if len(ints) != 5 || ints["-3"]+ints["3"] > 0 {
		t.Errorf("random_int -2 2 gave %v, want each of -2..2", ints)
	}
	if len(uuids) != 1000 {
		t.Errorf("%d distinct uuids of 1000", len(uuids))
	}
}

func TestLiteral(t *testing.T) {
	t.Setenv("LOADPROBE_TEST_SET", "v")
	tm, _ := Compile(`a{{env "LOADPROBE_TEST_SET"}}b`, Header, Scope{})
	if s, ok := tm.Literal(); !ok || s != "avb" {
		t.Errorf("Literal() = %q, %v; want \"avb\", true", s, ok)
	}
	tm, _ = Compile("a{{index}}", Header, Scope{})
	if _, ok := tm.Literal(); ok {
		t.Error("a template with {{index}} is literal")
	}
}

// A templated body is rendered into a reused buffer without allocating.
func TestAppendAllocatesNothing(t *testing.T) {
	tm, err := Compile(`{"id":{{index}},"n":{{random_int 1 1000}},"s":"{{random_string 8}}","u":"{{uuid}}","user":"{{.user}}"}`, Body, Scope{Columns: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	v := NewVars(0)
	v.Row = tableOf([]string{"ann"}).Row(0)
	buf := tm.Append(nil, v)
	if n := testing.AllocsPerRun(1000, func() { v.Index++; buf = tm.Append(buf[:0], v) }); n != 0 {
		t.Errorf("Append allocates %v times per request, want 0", n)
	}
}

func BenchmarkAppend(b *testing.B) {
	tm, _ := Compile(`{"id":{{index}},"n":{{random_int 1 1000}}}`, Body, Scope{})
	v := NewVars(0)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		v.Index++
		buf = tm.Append(buf[:0], v)
	}
}

// Size bounds what a template writes: exact for text and values, the most
// a function writes for the others, values percent-encoded at worst in a
// URL.
func TestSize(t *testing.T) {
	scope := Scope{Columns: []string{"user"}, Captured: []string{"token"}}
	v := &Vars{Row: tableOf([]string{"ab"}).Row(0), Captured: []string{"xyz"}}
	for _, tc := range []struct {
		text        string
		ctx         Context
		atLoad, got int64
	}{
		{"abc", Body, 3, 3},
		{"{{index}}-{{random_int 1 9}}", Body, 41, 41},
		{"{{random_string 100}}{{uuid}}", Header, 136, 136},
		{"{{.user}}/{{.token}}", Body, 1, 6},
		{"{{.user}}/{{.token}}", URL, 1, 16},
	} {
		tm, err := Compile(tc.text, tc.ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		if at, got := tm.Size(nil), tm.Size(v); at != tc.atLoad || got != tc.got {
			t.Errorf("%s: size %d at load, %d with values; want %d, %d", tc.text, at, got, tc.atLoad, tc.got)
		}
		if n := int64(len(tm.Append(nil, &Vars{Rand: NewVars(0).Rand, Row: v.Row, Captured: v.Captured}))); n > tc.got {
			t.Errorf("%s: wrote %d bytes, above its size %d", tc.text, n, tc.got)
		}
	}
}

// tableOf is a table of rows, each as long as the first.
func tableOf(rows ...[]string) *Table {
	t := NewTable(len(rows[0]), len(rows), 0)
	for _, r := range rows {
		t.Add(r)
	}
	return t
}
