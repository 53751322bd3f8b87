package config

import (
	"net/textproto"
	"net/url"
	"regexp"
	"strings"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
)

// requestTemplates are the templated parts of a request, compiled when the
// config loads; nil when no part of the request holds an action: the
// client then sends the same bytes every time.
type requestTemplates struct {
	URL     *template.Template
	Headers map[string]*template.Template // every header, by its configured name
	Body    *template.Template            // body or body_file
}

// literal reports whether every part writes a fixed text ({{env}} only):
// the client can then render the request once.
func (t *requestTemplates) literal() bool {
	parts := []*template.Template{t.URL, t.Body}
	for _, h := range t.Headers {
		parts = append(parts, h)
	}
	for _, p := range parts {
		if _, ok := p.Literal(); !ok {
			return false
		}
	}
	return true
}

// written is t with every part written out: t is literal.
func (t *requestTemplates) written() *requestTemplates {
	text := func(tm *template.Template) *template.Template {
		s, _ := tm.Literal()
		return template.Text(s)
	}
	w := &requestTemplates{URL: text(t.URL), Body: text(t.Body), Headers: make(map[string]*template.Template, len(t.Headers))}
	for name, h := range t.Headers {
		w.Headers[name] = text(h)
	}
	return w
}

// size returns the most bytes t's URL, headers (with their names) and
// body can render to with values for nothing.
func (t *requestTemplates) size() int64 {
	v := (*template.Vars)(nil)
	n := t.URL.Size(v) + t.Body.Size(v)
	for name, h := range t.Headers {
		n += plan.FieldSize(name, h, v)
	}
	return n
}

// sample stands for every slot of a template in the checks made at load.
const sample = "1"

// templates compiles r's URL, headers and body when any of them holds an
// action, and returns r as the checks made at load see it: every slot
// written as sample, every {{env}} with its value. A template cannot stand
// in the scheme, the host or the port of the URL, nor in a Host header:
// allowed_targets judges the host at load.
func (v *validator) templates(r *Request, parts *requestParts, p keyPath, scope template.Scope) *Request {
	if !strings.Contains(r.URL, "{{") && !strings.Contains(string(parts.payload), "{{") && !headersTemplated(r.Headers) {
		return r
	}
	checked := *r
	t := &requestTemplates{Headers: map[string]*template.Template{}}
	c := &templateCompiler{v: v, scope: scope, ok: true}
	t.URL = c.compile(r.URL, template.URL, p.to("url"))
	checked.URL = t.URL.Placeholder(sample)
	if u, err := url.Parse(checked.URL); err == nil && !strings.HasPrefix(t.URL.Prefix(), u.Scheme+"://"+u.Host) {
		v.errorf(p.to("url"), "a template cannot stand in the scheme, host or port: allowed_targets judges the host at load")
		c.ok = false
	}
	checked.Headers = map[string]string{}
	for name, value := range r.Headers {
		hp := p.to("headers", name)
		tm := c.compile(value, template.Header, hp)
		if _, lit := tm.Literal(); !lit && textproto.CanonicalMIMEHeaderKey(name) == "Host" {
			v.errorAt(p.to("headers"), hp, "a template cannot stand in the Host header: allowed_targets judges the host at load")
			c.ok = false
		}
		t.Headers[name] = tm
		checked.Headers[name] = tm.Placeholder(sample)
	}
	bp := p.to("body")
	if r.BodyFile != "" {
		bp = p.to("body_file")
	}
	t.Body = c.compile(string(parts.payload), template.Body, bp)
	if n := t.size(); c.ok && n > plan.MaxRequestBytes {
		v.errorf(p, "the templates can render a request of %d bytes (url, headers and body), above the bound of %d (16 MiB)", n, plan.MaxRequestBytes)
		c.ok = false
	}
	if c.ok {
		parts.templates = t
	}
	return &checked
}

// templateCompiler compiles the templates of one request (HTTP or gRPC),
// reports each error at its key, and remembers whether any failed: a request
// keeps its templates only when all of them compiled.
type templateCompiler struct {
	v     *validator
	scope template.Scope
	ok    bool
}

// compile returns text compiled in ctx, or text as a literal after
// reporting the error at at.
func (c *templateCompiler) compile(text string, ctx template.Context, at keyPath) *template.Template {
	tm, err := template.Compile(text, ctx, c.scope)
	if err != nil {
		c.v.errorf(at, "%v", err)
		c.ok = false
		return template.Text(text)
	}
	return tm
}

func headersTemplated(h map[string]string) bool {
	for _, v := range h {
		if strings.Contains(v, "{{") {
			return true
		}
	}
	return false
}

// envAction matches an {{env "NAME"}} action: /config shows <secret> for it.
var envAction = regexp.MustCompile(`\{\{\s*env\s+"[^"]*"\s*\}\}`)

// redactEnv hides every {{env}} action of s.
func redactEnv(s string) string {
	return envAction.ReplaceAllString(s, redacted)
}
