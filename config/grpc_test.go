package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/loadprobe/loadprobe/internal/testkit"
)

// grpcConfig is a config of one gRPC probe whose request holds lines.
func grpcConfig(lines string) string {
	return `allowed_targets: ["127.0.0.1"]
probes:
  - name: g
    load: {concurrency: [1, 2]}
    request:
` + lines
}

var demoProtoset, _ = filepath.Abs("../demo/target/target.protoset")

// A gRPC probe names its method and message; the descriptors default to
// reflection, which loading does not ask for, and the connections to one.
func TestGRPCProbes(t *testing.T) {
	t.Setenv("GRPC_TEST_TOKEN", "s3cret")
	c, err := Parse("g.yml", []byte(grpcConfig(`      url: grpc://127.0.0.1:1
      grpc:
        method: loadprobe.demo.v1.Target/Work
        message: '{"n": {{index}}}'
        metadata: {x-tenant: a, authorization: 'Bearer {{env "GRPC_TEST_TOKEN"}}'}
  - name: set
    load: {rate: [10]}
    request:
      url: grpcs://127.0.0.1:1
      tls_config: {insecure_skip_verify: true}
      grpc:
        method: loadprobe.demo.v1.Target/Noop
        message: '{"n": 1}'
        descriptors: `+demoProtoset+`
        connections: 4
  - name: health
    load: {rate: [1]}
    request:
      url: grpc://127.0.0.1:1
      grpc: {health: ""}
`)))
	if err != nil {
		t.Fatal(err)
	}
	g, pg := c.Probes[0].Request.GRPC, c.Plans()[0].Request.GRPC
	if g.Descriptors != Reflection || g.Connections != 1 || pg.Descriptors != nil {
		t.Errorf("defaults: descriptors %q, connections %d, set %v; want reflection and 1", g.Descriptors, g.Connections, pg.Descriptors)
	}
	if _, fixed := pg.Message.Literal(); fixed || pg.Message.Placeholder("1") != `{"n": 1}` {
		t.Errorf("message %q; want the message compiled", pg.Message.Placeholder("1"))
	}
	s := c.Plans()[1].Request.GRPC
	if _, fixed := s.Message.Literal(); s.Descriptors == nil || s.Connections != 4 || !fixed {
		t.Errorf("protoset probe: set %v, connections %d, message fixed %v", s.Descriptors, s.Connections, fixed)
	}
	if h := c.Probes[2].Request.GRPC.Health; h == nil || *h != "" {
		t.Errorf("health %v; want the server's own (\"\")", h)
	}
	shown := c.String()
	if strings.Contains(shown, "s3cret") || !strings.Contains(shown, "loadprobe.demo.v1.Target/Work") || strings.Contains(shown, "x-tenant: a") {
		t.Errorf("/config shows the metadata:\n%s", shown)
	}
}

// What does not fit is an error at its line; with a descriptor set, a
// message that does not fit the method's input type is one too.
func TestGRPCErrors(t *testing.T) {
	set := "        descriptors: " + demoProtoset + "\n"
	for _, tc := range []struct{ name, lines, want string }{
		{"unknown field", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: loadprobe.demo.v1.Target/Work\n        message: '{\"m\": 1}'\n" + set,
			`g.yml:9: probes[0].request.grpc.message: the message does not fit loadprobe.demo.v1.Request: (line 1:2): unknown field "m"`},
		{"templated wrong type", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: loadprobe.demo.v1.Target/Work\n        message: '{\"n\": [{{index}}]}'\n" + set,
			`g.yml:9: probes[0].request.grpc.message: the message does not fit loadprobe.demo.v1.Request: (line 1:7): invalid value for int64 field n: [`},
		{"no such method", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: loadprobe.demo.v1.Target/Nope\n" + set,
			`g.yml:8: probes[0].request.grpc.method: service loadprobe.demo.v1.Target has no method Nope`},
		{"no such file", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: a.B/C\n        descriptors: missing.protoset\n",
			`g.yml:9: probes[0].request.grpc.descriptors: cannot read missing.protoset: no such file or directory`},
		{"not a set", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: a.B/C\n        descriptors: grpc_test.go\n",
			`g.yml:9: probes[0].request.grpc.descriptors: grpc_test.go: not a FileDescriptorSet`},
		// The 16 MiB bound of an HTTP request bounds a call too: at load,
		// over the message and the metadata.
		{"message above the size bound", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: a.B/C\n        message: '{\"s\": \"{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}\"}'\n",
			`g.yml:7: probes[0].request.grpc: the templates can render a call of 17825801 bytes (message and metadata), above the bound of 16777216 (16 MiB)`},
		{"metadata above the size bound", "      url: grpc://127.0.0.1:1\n      grpc:\n        method: a.B/C\n        metadata: {x-pad: \"{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}{{random_string 1048576}}\"}\n",
			`g.yml:7: probes[0].request.grpc: the templates can render a call of 17825801 bytes (message and metadata), above the bound of 16777216 (16 MiB)`},
		{"bad method", "      url: grpc://127.0.0.1:1\n      grpc: {method: Work}\n",
			`g.yml:7: probes[0].request.grpc.method: "Work" is not package.Service/Method`},
		{"no section", "      url: grpc://127.0.0.1:1\n",
			`g.yml:6: probes[0].request.url: a grpc:// URL needs a grpc section: method and message, or health`},
		{"section on http", "      url: http://127.0.0.1:1/\n      grpc: {method: a.B/C}\n",
			`g.yml:7: probes[0].request.grpc: applies to grpc:// and grpcs:// URLs only`},
		{"host", "      url: grpc://10.0.0.1:1\n      grpc: {method: a.B/C}\n",
			`g.yml:6: probes[0].request.url: host "10.0.0.1" is not in allowed_targets`},
		{"path", "      url: grpc://127.0.0.1:1/a.B/C\n      grpc: {method: a.B/C}\n",
			`g.yml:6: probes[0].request.url: a gRPC URL is grpc://host:port: the method is grpc.method`},
		{"headers", "      url: grpc://127.0.0.1:1\n      headers: {X-A: b}\n      grpc: {method: a.B/C}\n",
			`g.yml:7: probes[0].request.headers: does not apply to gRPC probes: use grpc.metadata`},
		{"body file", "      url: grpc://127.0.0.1:1\n      body_file: testdata/payload.json\n      grpc: {method: a.B/C}\n",
			`g.yml:7: probes[0].request.body_file: does not apply to gRPC probes: use grpc.message`},
		{"proxy from the environment", "      url: grpc://127.0.0.1:1\n      proxy_from_environment: true\n      grpc: {method: a.B/C}\n",
			`g.yml:7: probes[0].request.proxy_from_environment: is not supported for gRPC probes`},
		{"metadata key", "      url: grpc://127.0.0.1:1\n      grpc: {method: a.B/C, metadata: {X-A: b}}\n",
			`g.yml:7: probes[0].request.grpc.metadata: "X-A" is not a valid metadata key: lower-case letters, digits, '-', '_' and '.', not starting with "grpc-"`},
		{"connections", "      url: grpc://127.0.0.1:1\n      grpc: {method: a.B/C, connections: 0}\n",
			`g.yml:7: probes[0].request.grpc.connections: must be from 1 to 1024 (got 0)`},
		{"health and method", "      url: grpc://127.0.0.1:1\n      grpc: {method: a.B/C, health: x}\n",
			`g.yml:7: probes[0].request.grpc.health: a health probe calls grpc.health.v1.Health/Check: method and message do not apply`},
		{"unknown key", "      url: grpc://127.0.0.1:1\n      grpc: {method: a.B/C, service: x}\n",
			`g.yml:7: probes[0].request.grpc: unknown key "service"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("g.yml", []byte(grpcConfig(tc.lines)))
			if err == nil {
				t.Fatal("Parse accepted the config")
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
}

// A descriptor set is parsed once for every probe that names it (under
// any path: it is known by its content) and once for every reload that
// finds it unchanged: 50 probes of a 1.2 MB set held 3.4 GB, and each
// reload as much again. A changed file is parsed anew.
func TestDescriptorSetsAreShared(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(demoProtoset)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, filepath.Join(dir, "a.protoset"), string(b))
	testkit.WriteFile(t, filepath.Join(dir, "copy.protoset"), string(b))
	file := filepath.Join(dir, "g.yml")
	probe := func(name, set string) string {
		return fmt.Sprintf("  - name: %s\n    request:\n      url: grpc://127.0.0.1:1\n      grpc: {method: loadprobe.demo.v1.Target/Noop, descriptors: %s}\n    load: {concurrency: [1]}\n", name, set)
	}
	testkit.WriteFile(t, file, "allowed_targets: [127.0.0.1]\nprobes:\n"+probe("a", "a.protoset")+probe("b", "a.protoset")+probe("c", "copy.protoset"))
	first, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sets := func(c *Config) []*protoregistry.Files {
		var out []*protoregistry.Files
		for _, p := range c.Plans() {
			out = append(out, p.Request.GRPC.Descriptors)
		}
		return out
	}
	s := sets(first)
	if s[0] == nil || s[0] != s[1] || s[0] != s[2] {
		t.Errorf("three probes of one set's content hold %p %p %p, want one parse", s[0], s[1], s[2])
	}
	again, err := loadFile(file, first)
	if err != nil {
		t.Fatal(err)
	}
	if s2 := sets(again); s2[0] != s[0] {
		t.Error("a reload of an unchanged set parsed it again")
	}
	testkit.WriteFile(t, filepath.Join(dir, "a.protoset"), string(b)+"\x98\x06\x00") // an unknown field 99: the same set, another content
	changed, err := loadFile(file, first)
	if err != nil {
		t.Fatal(err)
	}
	if s3 := sets(changed); s3[0] == s[0] || s3[2] != s[0] {
		t.Error("a reload did not parse the changed file anew, or not keep the unchanged copy")
	}
}

// A descriptor set past 16 MiB is a config error naming the file: parsed,
// one of 60 MiB held 2 GB.
func TestDescriptorSetIsBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "huge.protoset")
	testkit.WriteFile(t, big, strings.Repeat("\x98\x06\x00", (16<<20)/3+1))
	_, err := Parse("g.yml", []byte("allowed_targets: [127.0.0.1]\nprobes:\n  - name: a\n    request:\n      url: grpc://127.0.0.1:1\n      grpc: {method: a.B/C, descriptors: "+big+"}\n    load: {concurrency: [1]}\n"))
	if want := "g.yml:6: probes[0].request.grpc.descriptors: cannot read " + big + ": larger than 16 MiB"; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
