package plan

import (
	"crypto/tls"
	"net/url"
	"slices"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/config/template"
)

// MaxRequestBytes bounds what a templated request renders to: its URL,
// headers and body together (docs/templates.md, "Templates"). A config
// whose functions and text can exceed it is an error; an attempt whose data
// or captured values would make it exceed it is not sent (outcome
// request_too_large).
const MaxRequestBytes = 16 << 20

// Request is one request of a probe, or of one step of its flow, compiled
// when the config loads: its payload read, its templates compiled, its
// credentials and TLS settings read once, its headers decided. Every run
// of the probe shares it: read it, never change it.
type Request struct {
	// URL is the request's URL; a templated one as the checks at load saw
	// it (every slot written as 1), whose scheme, host and port are
	// literal: a template cannot stand in them.
	URL    *url.URL
	Method string
	// Whole writes an attempt's whole URL, Target its request target (path
	// and query), Body its body: fixed texts unless Templated.
	Whole, Target, Body *template.Template
	// Header is what every attempt sends beside the framing.
	Header Header
	// Templated reports a request whose URL, headers or body (or gRPC
	// message or metadata) vary per attempt; their size is then bounded
	// per attempt (MaxRequestBytes).
	Templated bool
	Timeout   time.Duration
	KeepAlive bool
	// HTTP2 offers h2 by ALPN over TLS (enable_http2), and
	// StreamsPerConnection workers share one HTTP/2 connection.
	HTTP2                bool
	StreamsPerConnection int
	// HTTP3 sends over QUIC, on HTTP3Connections connections shared by a
	// level's workers (0: one a worker).
	HTTP3            bool
	HTTP3Connections int
	// Authorization is the header value the static credentials resolve to
	// (basic_auth, authorization, bearer_token and their *_file
	// settings), read once; "" when there are none. A net/http request's
	// round tripper adds its own instead.
	Authorization string
	// TLS is tls_config built once, for a connection to the URL's host;
	// nil for a scheme without TLS. A client clones it to set its ALPN.
	TLS *tls.Config
	// NetHTTP names the setting only net/http sends (a proxy, OAuth2,
	// follow_redirects, http_headers, a secret reference); "" when the
	// lean clients send the request. Client is an HTTP request's settings
	// as net/http takes them, with the proxy resolved once.
	NetHTTP string
	Client  commoncfg.HTTPClientConfig
	// Proxy is the proxy of a WebSocket probe's handshakes, resolved once;
	// nil for none.
	Proxy *url.URL
	// GRPC makes the request a unary gRPC call; nil otherwise.
	GRPC *GRPC
	// Script rewrites each attempt and reads its reply; nil without one.
	Script Script

	valid codeTable
}

// Header is the header section of every attempt of a request: the
// configured headers, and a User-Agent and an Authorization unless they
// are among them. Host is apart: each protocol puts it where it wants it.
type Header struct {
	Host   *template.Template // the configured Host header; nil: the URL's host
	Fields []Field            // in the order the lean clients write them
}

// Field is one header field, or a gRPC call's metadata: a name and its
// value's template (a fixed text unless the request is templated).
type Field struct {
	Name  string // canonical, as net/http sends it (lower case for gRPC)
	Value *template.Template
}

// Has reports whether the request sends the header name (canonical).
func (h Header) Has(name string) bool {
	return slices.ContainsFunc(h.Fields, func(f Field) bool { return f.Name == name })
}

// codeTable answers ValidCode for every three-digit status code, so that an
// attempt looks its outcome up instead of searching valid_status_codes.
type codeTable [1000]bool

// SetValidCodes makes codes the request's successes; none: any 2xx.
func (r *Request) SetValidCodes(codes []int) {
	for code := range r.valid {
		r.valid[code] = code >= 200 && code <= 299
		if len(codes) > 0 {
			r.valid[code] = slices.Contains(codes, code)
		}
	}
}

// ValidCode reports whether an HTTP response with this status code is a
// success.
func (r *Request) ValidCode(code int) bool {
	return code >= 0 && code < len(r.valid) && r.valid[code]
}

// WebSocket reports a WebSocket probe's request: a ws:// or wss:// URL.
func (r *Request) WebSocket() bool {
	return strings.EqualFold(r.URL.Scheme, "ws") || strings.EqualFold(r.URL.Scheme, "wss")
}

// Size is the most bytes an attempt's URL, headers (with their names) and
// body render to with v's values; v nil counts values for nothing.
func (r *Request) Size(v *template.Vars) int64 {
	n := r.Whole.Size(v) + r.Body.Size(v)
	for _, f := range r.Header.Fields {
		n += FieldSize(f.Name, f.Value, v)
	}
	if r.Header.Host != nil {
		n += FieldSize("Host", r.Header.Host, v)
	}
	return n
}

// FieldSize is the most bytes a header field or metadata entry renders to
// with v's values, as a request's size bound counts it: "Name: value\r\n".
func FieldSize(name string, value *template.Template, v *template.Vars) int64 {
	return int64(len(name)) + 4 + value.Size(v)
}
