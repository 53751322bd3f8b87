package config

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
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
	csv, jsonl, plain := c.Plans()[0], c.Plans()[1], c.Plans()[2]
	if d := csv.Rows; c.Probes[0].Data.Order != OrderSequential || d.Random || !slices.Equal(d.Columns, []string{"user", "password"}) || d.Table.Len() != 2 || d.Table.Row(1).Field(1) != "pw2" {
		t.Errorf("csv data: %+v", d)
	}
	if d := jsonl.Rows; c.Probes[1].Data.Order != OrderRandom || !d.Random || !slices.Equal(d.Columns, []string{"id", "user"}) || !slices.Equal(d.Table.Row(1).Fields(), []string{"2", "bob"}) {
		t.Errorf("jsonl data: %+v", d)
	}
	if plain.Request.Templated {
		t.Error("a request without actions is templated: it would not take the fixed path")
	}
	tm := csv.Request
	if !tm.Templated {
		t.Fatalf("a templated request is not: %+v", tm)
	}
	v := template.NewVars(0)
	v.Index, v.Row = 7, csv.Rows.Table.Row(0)
	for _, check := range []struct{ got, want string }{
		{string(tm.Whole.Append(nil, v)), "http://127.0.0.1:8080/users/ann?n=7"},
		{string(headerValue(tm, "Authorization").Append(nil, v)), "Bearer s3cret-token"},
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

func TestFlowLoads(t *testing.T) {
	c, err := Parse("testdata/flow.yml", []byte(`allowed_targets: ["127.0.0.1"]
probes:
  - name: shop
    data: {file: users.csv}
    flow:
      - name: login
        request: {method: POST, url: "http://127.0.0.1:8080/login", body: '{"user": "{{.user}}"}'}
        capture: {token: {json: token}, session: {header: Set-Cookie}}
        think: 100ms
      - name: item
        request:
          url: http://127.0.0.1:8080/items/{{random_int 1 5000}}
          headers: {Authorization: "Bearer {{.token}}"}
          timeout: 2s
        think: {min: 10ms, max: 30ms}
    load: {rate: [1, 2]}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Probes[0]
	login, item := p.Flow[0], p.Flow[1]
	if compiled := c.Plans()[0]; compiled.Request != compiled.Flow[0].Request || compiled.Request.Method != "POST" {
		t.Errorf("the plan's request is not its first step's: %+v", compiled.Request)
	}
	if item.Request.Method != "GET" || item.Request.Timeout != model.Duration(2*time.Second) || login.Request.Timeout != model.Duration(time.Second) {
		t.Errorf("a step's request does not start from the defaults: %+v", item.Request)
	}
	if *login.Think != (Think{model.Duration(100 * time.Millisecond), model.Duration(100 * time.Millisecond)}) ||
		*item.Think != (Think{model.Duration(10 * time.Millisecond), model.Duration(30 * time.Millisecond)}) {
		t.Errorf("think: %+v, %+v", login.Think, item.Think)
	}
	if got := login.CaptureNames(); !slices.Equal(got, []string{"session", "token"}) {
		t.Errorf("capture names %v", got)
	}
	v := template.NewVars(2)
	v.Captured[1] = "tok"
	if got := string(headerValue(c.Plans()[0].Flow[1].Request, "Authorization").Append(nil, v)); got != "Bearer tok" {
		t.Errorf("the captured token renders %q", got)
	}
	out := c.String()
	if strings.Contains(out, "\n    request:") {
		t.Errorf("/config shows a flow probe's request beside its flow:\n%s", out)
	}
	if _, err := Parse("redacted.yml", []byte(out)); err != nil {
		t.Errorf("/config's YAML does not load again: %v\n%s", err, out)
	}
}

// A data file is read at load, and again when the config is: a reload sees
// its new rows.
func TestDataReadAgainOnLoad(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/rows.csv"
	yml := []byte(`allowed_targets: ["127.0.0.1"]
probes:
  - name: p
    data: {file: rows.csv}
    request: {url: "http://127.0.0.1:8080/u/{{.id}}"}
    load: {concurrency: [1]}
`)
	for _, rows := range []int{2, 5} {
		text := "id\n"
		for i := range rows {
			text += strconv.Itoa(i) + "\n"
		}
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Parse(dir+"/loadprobe.yml", yml)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Plans()[0].Rows.Table.Len(); n != rows {
			t.Errorf("%d rows loaded, the file holds %d", n, rows)
		}
	}
}

// headerValue is the template of r's header name.
func headerValue(r *plan.Request, name string) *template.Template {
	for _, f := range r.Header.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}
