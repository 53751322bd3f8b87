package config

import (
	"crypto/sha256"
	"maps"
	"net/url"
	"slices"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/grpcdesc"
	"github.com/loadprobe/loadprobe/internal/regularfile"
	"github.com/loadprobe/loadprobe/plan"
)

// GRPC is a gRPC call (docs/grpc.md): request.grpc, with a grpc:// or
// grpcs:// URL; unary, or a stream with Stream.
type GRPC struct {
	// Method is package.Service/Method.
	Method string `yaml:"method,omitempty"`
	// Message is the JSON of the method's input message; templates allowed.
	Message string `yaml:"message,omitempty"`
	// Metadata is sent with every call; templates allowed in the values.
	Metadata map[string]string `yaml:"metadata,omitempty"`
	// Descriptors is "reflection" (asked of the server when a run starts)
	// or a FileDescriptorSet file, read at load.
	Descriptors string `yaml:"descriptors"`
	// Connections is how many HTTP/2 connections the calls in flight share.
	Connections int `yaml:"connections"`
	// Health, when set, makes the call grpc.health.v1.Health/Check of this
	// service ("" for the server as a whole), instead of Method and Message.
	Health *string `yaml:"health,omitempty"`
	// Stream makes each user a stream of a streaming method.
	Stream *GRPCStream `yaml:"stream,omitempty"`
}

// Reflection is the descriptors value that asks the server for them.
const Reflection = "reflection"

// defaultGRPC is a grpc section's defaults. One connection is what a
// grpc-go client keeps to a target, so that a level of N RPCs in flight
// reaches the service as N streams on one connection, as its clients do
// (docs/grpc.md, "Connections").
var defaultGRPC = GRPC{Descriptors: Reflection, Connections: 1}

// maxConnections bounds grpc.connections: each is an HTTP/2 connection
// of its own, with its own goroutines.
const maxConnections = 1024

// maxProtosetSize bounds a descriptor set file: parsed, it is held in
// memory at about 30 times its size (a 60 MiB set took 2 GB), and an API
// with all its imports is a megabyte or two.
const maxProtosetSize = 16 << 20

// grpcScheme reports the schemes of a gRPC probe's URL.
func grpcScheme(scheme string) bool { return scheme == "grpc" || scheme == "grpcs" }

// grpc checks a probe's gRPC call, when it has one or its URL says
// grpc:// (docs/grpc.md), and compiles its templates and reads its
// descriptors into parts.
func (v *validator) grpc(r *Request, parts *requestParts, rp keyPath, dir string, scope template.Scope) {
	u, err := url.Parse(r.URL)
	scheme := err == nil && grpcScheme(u.Scheme)
	g, gp := r.GRPC, rp.to("grpc")
	switch {
	case g == nil && scheme:
		v.errorf(rp.to("url"), "a %s:// URL needs a grpc section: method and message, or health", u.Scheme)
		return
	case g == nil:
		return
	case !scheme:
		v.errorf(gp, "applies to grpc:// and grpcs:// URLs only")
		return
	}
	v.grpcRequest(r, rp)
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		v.errorf(rp.to("url"), "a gRPC URL is grpc://host:port: the method is grpc.method")
	}
	if g.Connections < 1 || g.Connections > maxConnections {
		v.errorf(gp.to("connections"), "must be from 1 to %d (got %d)", maxConnections, g.Connections)
	}
	method := g.Method
	if g.Health != nil {
		if g.Method != "" || g.Message != "" {
			v.errorf(gp.to("health"), "a health probe calls %s: method and message do not apply", plan.HealthMethod)
		}
		method = plan.HealthMethod
	} else if g.Method == "" {
		v.errorf(gp.to("method"), "required (package.Service/Method), or health")
	} else if _, _, err := grpcdesc.SplitMethod(g.Method); err != nil {
		v.errorf(gp.to("method"), "%v", err)
	}
	message := v.grpcTemplates(g, parts, gp, scope)
	parts.set = v.descriptors(g, parts, gp, dir)
	if parts.set == nil || g.Health != nil {
		return // reflection: the run resolves the method when it starts
	}
	md, err := grpcdesc.Method(parts.set, method)
	if err != nil {
		v.errorf(gp.to("method"), "%v", err)
		return
	}
	var kind, match string
	if g.Stream != nil {
		kind, match = g.Stream.Kind, g.Stream.Match
	}
	if err := grpcdesc.CheckStream(md, kind, match); err != nil {
		v.errorf(gp.to("method"), "%v", err)
		return
	}
	if _, err := grpcdesc.Encode(md.Input(), []byte(message)); err != nil {
		v.errorf(gp.to("message"), "%v", err)
	}
}

// grpcRequest checks that r sets nothing of HTTP's but what gRPC shares
// (timeout, tls_config, credentials).
func (v *validator) grpcRequest(r *Request, rp keyPath) {
	if r.Method != DefaultRequest.Method {
		v.errorf(rp.to("method"), "does not apply to gRPC probes: the method is grpc.method")
	}
	if len(r.Headers) > 0 {
		v.errorf(rp.to("headers"), "does not apply to gRPC probes: use grpc.metadata")
	}
	if r.Body != "" {
		v.errorf(rp.to("body"), "does not apply to gRPC probes: use grpc.message")
	}
	if r.BodyFile != "" {
		v.errorf(rp.to("body_file"), "does not apply to gRPC probes: use grpc.message")
	}
	if len(r.ValidStatusCodes) > 0 {
		v.errorf(rp.to("valid_status_codes"), "does not apply to gRPC probes: OK is the success")
	}
	hc := &r.HTTPClientConfig
	switch {
	case hc.OAuth2 != nil:
		v.errorf(rp.to("oauth2"), "is not supported for gRPC probes")
	case hc.ProxyURL.URL != nil:
		v.errorf(rp.to("proxy_url"), "is not supported for gRPC probes")
	case hc.ProxyFromEnvironment:
		v.errorf(rp.to("proxy_from_environment"), "is not supported for gRPC probes")
	case hc.HTTPHeaders != nil && len(hc.HTTPHeaders.Headers) > 0:
		v.errorf(rp.to("http_headers"), "does not apply to gRPC probes: use grpc.metadata")
	case hc.BasicAuth != nil && (hc.BasicAuth.UsernameRef != "" || hc.BasicAuth.PasswordRef != ""),
		hc.Authorization != nil && hc.Authorization.CredentialsRef != "",
		tlsRef(&hc.TLSConfig):
		v.errorf(rp, "secret references are not supported for gRPC probes: use the *_file settings")
	}
}

func tlsRef(t *commoncfg.TLSConfig) bool {
	return t.CARef != "" || t.CertRef != "" || t.KeyRef != ""
}

// grpcTemplates compiles the message and the metadata when any holds an
// action, and returns the message as the checks at load see it: every
// slot written as sample. Metadata keys are lower case in HTTP/2.
func (v *validator) grpcTemplates(g *GRPC, parts *requestParts, gp keyPath, scope template.Scope) string {
	mp := gp.to("metadata")
	for _, name := range slices.Sorted(maps.Keys(g.Metadata)) {
		if !validMetadataKey(name) {
			v.errorAt(mp, mp.to(name), "%q is not a valid metadata key: lower-case letters, digits, '-', '_' and '.', not starting with \"grpc-\"", name)
		}
	}
	message := g.Message
	if g.Health != nil {
		return message
	}
	if !strings.Contains(message, "{{") && !slices.ContainsFunc(slices.Collect(maps.Values(g.Metadata)), func(s string) bool { return strings.Contains(s, "{{") }) {
		return message
	}
	t := &grpcTemplates{Metadata: map[string]*template.Template{}}
	c := &templateCompiler{v: v, scope: scope, ok: true}
	t.Message = c.compile(message, template.Body, gp.to("message"))
	n := t.Message.Size(nil)
	for name, value := range g.Metadata {
		t.Metadata[name] = c.compile(value, template.Header, mp.to(name))
		n += plan.FieldSize(name, t.Metadata[name], nil)
	}
	if c.ok && n > plan.MaxRequestBytes {
		v.errorf(gp, "the templates can render a call of %d bytes (message and metadata), above the bound of %d (16 MiB)", n, plan.MaxRequestBytes)
		c.ok = false
	}
	if c.ok {
		parts.grpc = t
	}
	return t.Message.Placeholder(sample)
}

// validMetadataKey reports an ASCII metadata key that gRPC lets a client
// set: binary (-bin) keys carry bytes, which a YAML string does not.
func validMetadataKey(k string) bool {
	if k == "" || strings.HasPrefix(k, "grpc-") || strings.HasSuffix(k, "-bin") || k[0] == ':' {
		return false
	}
	for i := range len(k) {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// grpcTemplates are the templated parts of a gRPC call, compiled at load.
type grpcTemplates struct {
	Message  *template.Template
	Metadata map[string]*template.Template
}

// descriptors reads the descriptor set a call names, relative to dir;
// nil with reflection.
func (v *validator) descriptors(g *GRPC, parts *requestParts, gp keyPath, dir string) *protoregistry.Files {
	dp := gp.to("descriptors")
	if g.Descriptors == Reflection || g.Descriptors == "" {
		g.Descriptors = Reflection
		return nil
	}
	file := commoncfg.JoinDir(dir, g.Descriptors)
	b, err := regularfile.Read(file, maxProtosetSize)
	if err != nil {
		v.errorf(dp, "%v", err)
		return nil
	}
	sum := sha256.Sum256(b)
	set, ok := v.sets[sum]
	if !ok {
		set, ok = v.running[sum]
	}
	if !ok {
		if set, err = grpcdesc.ParseSet(b); err != nil {
			v.errorf(dp, "%s: %v", g.Descriptors, err)
			return nil
		}
	}
	v.sets[sum] = set
	g.Descriptors, parts.sum = file, sum
	return set
}
