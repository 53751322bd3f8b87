package config

import (
	"os"
	"slices"
	"strings"
	"testing"

	commoncfg "github.com/prometheus/common/config"
)

// Parse compiles each probe once: its plan holds the files it names, so
// that a run never reads body_file or the data file.
func TestParsedPlanNeedsNoFile(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"body.json": `{"id": "{{.id}}"}`, "rows.csv": "id\n1\n2\n"} {
		if err := os.WriteFile(dir+"/"+name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Parse(dir+"/loadprobe.yml", []byte(`allowed_targets: ["127.0.0.1"]
probes:
  - name: p
    data: {file: rows.csv}
    request: {url: "http://127.0.0.1:8080/u", method: POST, body_file: body.json}
    load: {concurrency: [1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	p := c.Plans()[0]
	if body := p.Request.Body.Placeholder("7"); body != `{"id": "7"}` || !p.Request.Templated || p.Rows.Table.Len() != 2 {
		t.Errorf("body %q, templated %v, %d rows; want the file's body compiled and its 2 rows", body, p.Request.Templated, p.Rows.Table.Len())
	}
}

// A probe built in Go compiles as a file's does, and its errors name the
// probe and the key, with no file to name.
func TestCompileGoProbe(t *testing.T) {
	p := DefaultProbe
	p.Name = "api"
	p.Request.URL = "http://example.com/{{index}}"
	p.Request.Method = "POST"
	p.Request.Body = `{"n": {{index}}}`
	p.Request.HTTPClientConfig.BearerToken = "t0ken"
	p.Load.Concurrency = []int{1, 2}
	got, err := Compile(p)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if body := got.Request.Body.Placeholder("1"); body != `{"n": 1}` || !got.Request.Templated {
		t.Errorf("body %q, templated %v; want the body, compiled", body, got.Request.Templated)
	}
	if p.Request.HTTPClientConfig.BearerToken != "t0ken" || p.Request.HTTPClientConfig.Authorization != nil {
		t.Error("Compile changed the probe it was given")
	}

	p.Name = "bad"
	p.Request.Headers = map[string]string{"X-A": "a\r\nX-B: b"}
	p.Request.Timeout = 0
	p.Request.HTTPClientConfig = commoncfg.HTTPClientConfig{Authorization: &commoncfg.Authorization{Type: "Basic", Credentials: "x"}}
	_, err = Compile(p)
	var lines []string
	if err != nil {
		lines = strings.Split(err.Error(), "\n")
	}
	want := []string{
		`probe "bad": request.headers: the value of X-A holds a control character`,
		`probe "bad": request.timeout: must be positive (got 0s)`,
		`probe "bad": request: authorization type cannot be set to "basic", use "basic_auth" instead`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
