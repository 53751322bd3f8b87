package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/loadprobe/loadprobe/prober/template"
)

func TestDataAndTemplatesLoad(t *testing.T) {
	t.Setenv("LOADPROBE_TEST_TOKEN", "s3cret-token")
	c, err := Parse("testdata/templates.yml", []byte(`allowed_targets: ["127.0.0.1"]
probes:
  - name: csv
    data: {file: users.csv}
    request:
      url: http://127.0.0.1:8080/users/{{.user}}?n={{index}}
      method: POST
      headers: {Authorization: 'Bearer {{env "LOADPROBE_TEST_TOKEN"}}'}
      body: '{"password": "{{.password}}"}'
    load: {concurrency: [1]}
  - name: jsonl
    data: {file: users.jsonl, order: random}
    request:
      url: http://127.0.0.1:8080/items/{{.id}}
    load: {concurrency: [1]}
  - name: plain
    request:
      url: http://127.0.0.1:8080/work
    load: {concurrency: [1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	csv, jsonl, plain := c.Probes[0], c.Probes[1], c.Probes[2]
	if d := csv.Data; d.Order != OrderSequential || !slices.Equal(d.Columns, []string{"user", "password"}) || len(d.Rows) != 2 || d.Rows[1][1] != "pw2" {
		t.Errorf("csv data: %+v", d)
	}
	if d := jsonl.Data; d.Order != OrderRandom || !slices.Equal(d.Columns, []string{"id", "user"}) || !slices.Equal(d.Rows[1], []string{"2", "bob"}) {
		t.Errorf("jsonl data: %+v", d)
	}
	if plain.Request.Templates != nil {
		t.Error("a request without actions has templates: it would not take the fixed path")
	}
	tm := csv.Request.Templates
	if tm == nil || tm.Literal() {
		t.Fatalf("templates of a templated request: %+v", tm)
	}
	v := template.NewVars(0)
	v.Index, v.Row = 7, csv.Data.Rows[0]
	for _, check := range []struct{ got, want string }{
		{string(tm.URL.Append(nil, v)), "http://127.0.0.1:8080/users/ann?n=7"},
		{string(tm.Headers["Authorization"].Append(nil, v)), "Bearer s3cret-token"},
		{string(tm.Body.Append(nil, v)), `{"password": "pw1"}`},
	} {
		if check.got != check.want {
			t.Errorf("rendered %q, want %q", check.got, check.want)
		}
	}

	// /config: neither a row nor an {{env}} value, the row count in a comment.
	out := c.String()
	for _, secret := range []string{"pw1", "ann", "bob", "s3cret-token", "LOADPROBE_TEST_TOKEN"} {
		if strings.Contains(out, secret) {
			t.Errorf("/config shows %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "# 2 rows") || !strings.Contains(out, "{{.password}}") {
		t.Errorf("/config does not show the row count or the template text:\n%s", out)
	}
	if _, err := Parse("redacted.yml", []byte(out)); err != nil {
		t.Errorf("/config's YAML does not load again: %v", err)
	}
}
