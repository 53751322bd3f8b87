// Package std sends a probe's HTTP requests through net/http, configured
// by prometheus/common from the probe's inline HTTP client settings (TLS,
// auth, proxy, OAuth2, HTTP/2, headers): the path of what the lean clients
// cannot send (plan.Request.NetHTTP), and of a flow's step that captures.
//
// Every Conn gets a RoundTripper of its own, as k6 gives each virtual user
// its own transport: a worker then owns exactly one connection, as on the fast
// path, whatever the level. A shared Transport would keep at most 1000 idle
// connections per host (prometheus/common's MaxIdleConnsPerHost), so above
// that level workers would close and redial connections between requests;
// all workers would contend on its pool lock; and with HTTP/2 it would carry
// every worker's requests as streams of one or a few connections, so the
// "connections" of a concurrency level would not be connections at all.
// The TLS configuration is built once and cloned for each Conn.
//
// OAuth2 is the exception: its round tripper fetches and caches a token, and
// one round tripper per Conn would ask the token endpoint once per worker.
// With oauth2 every Conn shares one RoundTripper, and with it one pool.
package std

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// Client sends one probe's request through net/http.
type Client struct {
	aborted context.Context // ends on Abort: every request gives up
	abort   context.CancelFunc
	req     *plan.Request
	name    string
	opts    []commoncfg.HTTPClientOption
	tmpl    *http.Request // method, URL, Host and fixed headers of every attempt
	payload []byte
	// varying are the headers that vary per attempt, written into a copy
	// of tmpl (templated) with the URL and the body.
	varying []plan.Field

	// base is built by newStdClient, which so checks the settings. With
	// oauth2 every Conn shares it; otherwise it serves only a Conn whose
	// own RoundTripper could not be built.
	base   http.RoundTripper
	shared bool
	rts    wire.ConnSet[http.RoundTripper] // the Conns' own RoundTrippers

	// take hands each Conn its RoundTripper instead (Over), and whether
	// the Conn owns it; nil: net/http's. classify names a failure.
	take     func() (rt http.RoundTripper, own bool)
	classify func(error) result.Outcome
}

// New builds the client of req, a request of the probe name, which
// config compiled. It does not dial.
func New(req *plan.Request, name string) (*Client, error) {
	c, err := newClient(req, name)
	if err != nil {
		return nil, err
	}
	c.opts = append(c.opts, commoncfg.WithDialContextFunc(func(ctx context.Context, _, addr string) (net.Conn, error) {
		return wire.Dial(ctx, addr, time.Time{})
	}))
	if !req.KeepAlive {
		c.opts = append(c.opts, commoncfg.WithKeepAlivesDisabled())
	}
	if tlsConfig := req.TLS; tlsConfig != nil && !c.shared {
		c.opts = append(c.opts, commoncfg.WithNewTLSConfigFunc(
			func(context.Context, *commoncfg.TLSConfig, ...commoncfg.TLSConfigOption) (*tls.Config, error) {
				return tlsConfig.Clone(), nil
			}))
	}
	c.base, err = commoncfg.NewRoundTripperFromConfig(req.Client, name, c.opts...)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Over builds a client of req that sends over the RoundTrippers take
// hands each Conn (HTTP/3's, package h3) instead of net/http's, and names
// its failures with classify: the requests, bodies and responses are
// net/http's types all the same.
func Over(req *plan.Request, name string, take func() (rt http.RoundTripper, own bool), classify func(error) result.Outcome) (*Client, error) {
	c, err := newClient(req, name)
	if err != nil {
		return nil, err
	}
	c.take, c.classify = take, classify
	return c, nil
}

// newClient is what New and Over share: the request every attempt sends.
func newClient(req *plan.Request, name string) (*Client, error) {
	tmpl, err := http.NewRequest(req.Method, req.URL.String(), nil)
	if err != nil {
		return nil, err
	}
	if req.Header.Host != nil {
		tmpl.Host, _ = req.Header.Host.Literal() // config keeps Host literal
	}
	payload, _ := req.Body.Literal()
	aborted, abort := context.WithCancel(context.Background())
	return &Client{
		aborted: aborted, abort: abort,
		req:      req,
		varying:  wire.FixedHeaders(req.Header, tmpl.Header),
		name:     name,
		tmpl:     tmpl,
		payload:  []byte(payload),
		shared:   req.Client.OAuth2 != nil,
		classify: wire.Classify,
	}, nil
}

// NewConn returns one user's connection; vars are as on the lean client.
func (c *Client) NewConn(vars *template.Vars) wire.Conn {
	sc := &conn{c: c, rt: c.base, vars: vars}
	switch {
	case c.take != nil:
		// A shared one too: Close releases it.
		sc.rt, sc.own = c.take()
		c.rts.Add(sc.rt)
	case !c.shared:
		// The settings were checked by newStdClient; should a file they
		// name have gone since, the Conn falls back to sharing base.
		if rt, err := commoncfg.NewRoundTripperFromConfig(c.req.Client, c.name, c.opts...); err == nil {
			sc.rt, sc.own = rt, true
			c.rts.Add(rt)
		}
	}
	sc.client = &http.Client{Transport: sc.rt, CheckRedirect: c.checkRedirect}
	return sc
}

func (c *Client) Abort() {
	c.abort()
	c.Close()
}

func (c *Client) Close() {
	for _, rt := range c.rts.Drain() {
		closeIdle(rt)
	}
	closeIdle(c.base)
}

// checkRedirect follows redirects only when follow_redirects says so, and
// only to the same host: a load probe must not carry its load to a host the
// operator did not name. A redirect it does not follow is the response.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	switch {
	case !c.req.Client.FollowRedirects:
		return http.ErrUseLastResponse
	case len(via) >= 10:
		return errors.New("stopped after 10 redirects")
	case !strings.EqualFold(req.URL.Hostname(), via[0].URL.Hostname()):
		return http.ErrUseLastResponse
	}
	return nil
}

func (c *Client) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(c.payload)), nil
}

// closeIdle releases what rt holds: all of it when it can be closed (an
// HTTP/3 transport's UDP socket), else its idle connections.
func closeIdle(rt http.RoundTripper) {
	switch rt := rt.(type) {
	case io.Closer:
		rt.Close()
	case interface{ CloseIdleConnections() }:
		rt.CloseIdleConnections()
	}
}

type conn struct {
	c      *Client
	rt     http.RoundTripper
	own    bool // rt is this Conn's alone
	client *http.Client
	vars   *template.Vars
}

func (sc *conn) Do(deadline time.Time) (result.Code, result.Outcome) {
	return sc.DoCapture(deadline, nil, nil)
}

// DoCapture is Do for a flow step that captures values or a request with
// a script (wire.Capturer): it sends m when m is not nil, and read, when
// not nil, reads every response's headers and body (up to MaxBodyBytes).
func (sc *conn) DoCapture(deadline time.Time, m *plan.Message, read wire.Read) (result.Code, result.Outcome) {
	ctx, cancel := context.WithDeadline(sc.c.aborted, deadline)
	defer cancel()
	req := sc.c.tmpl.WithContext(ctx)
	getBody := sc.c.getBody
	if sc.c.req.Templated || m != nil {
		req = sc.c.tmpl.Clone(ctx) // its own headers, to be written
		var payload []byte
		var err error
		if m != nil {
			payload, err = message(req, m)
		} else {
			payload, err = sc.c.templated(req, sc.vars)
		}
		if err != nil {
			return result.Code{}, wire.Classify(err)
		}
		getBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
		req.ContentLength = int64(len(payload))
	} else {
		req.ContentLength = int64(len(sc.c.payload))
	}
	if req.ContentLength > 0 {
		// A new reader each time: the transport may still be closing the
		// last one after RoundTrip returned.
		req.Body, _ = getBody()
		req.GetBody = getBody
	}
	var resp *http.Response
	var err error
	if sc.c.req.Client.FollowRedirects {
		resp, err = sc.client.Do(req)
	} else {
		// Without redirects, http.Client only adds copies of the request.
		resp, err = sc.rt.RoundTrip(req)
	}
	if err != nil {
		return result.Code{}, sc.c.failure(ctx, err)
	}
	// The transport ends a body's reads at the request's deadline, but not
	// those of a 101 response's, which is the bare connection: closing the
	// body at the deadline, or on Abort, ends them all.
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	var body []byte
	if read != nil {
		body, err = readBody(resp)
	} else {
		err = drainBody(resp.Body)
	}
	stop()
	resp.Body.Close()
	if err != nil {
		return result.Code{}, sc.c.failure(ctx, err)
	}
	o := wire.Outcome(sc.c.req, resp.StatusCode)
	if read != nil {
		o = read(o, resp.StatusCode, resp.Header, body)
	}
	return result.HTTPStatus(resp.StatusCode), o
}

// readBody reads a body that a capture looks into, up to maxBodyBytes: in
// one buffer of its Content-Length when the response gives one, rather
// than in buffers that grow to twice its size.
func readBody(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= wire.MaxBodyBytes {
		body := make([]byte, n)
		_, err := io.ReadFull(resp.Body, body)
		return body, err
	}
	return io.ReadAll(io.LimitReader(resp.Body, wire.MaxBodyBytes))
}

func (sc *conn) Close() {
	if sc.own {
		sc.c.rts.Remove(sc.rt)
		closeIdle(sc.rt)
	}
}

// failure classifies err, except that once the attempt's own deadline has
// passed, whatever broke was broken by it.
func (c *Client) failure(ctx context.Context, err error) result.Outcome {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return result.Timeout
	}
	return c.classify(err)
}

// drainBody reads a body to its end, or to the body limit: closing it unread
// beyond that makes the transport close the connection instead of reading on.
func drainBody(body io.Reader) error {
	bp := wire.Scratch.Get().(*[]byte)
	defer wire.Scratch.Put(bp)
	buf := *bp
	var total int64
	for total <= wire.MaxBodyBytes {
		n, err := body.Read(buf[:min(int64(len(buf)), wire.MaxBodyBytes+1-total)])
		total += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// templated writes the varying parts of req (a copy of the client's) for
// the next attempt on net/http, and returns its body.
func (c *Client) templated(req *http.Request, v *template.Vars) ([]byte, error) {
	if c.req.Size(v) > plan.MaxRequestBytes {
		return nil, wire.ErrTooLarge
	}
	u, err := url.Parse(string(c.req.Whole.Append(nil, v)))
	if err != nil {
		return nil, err
	}
	req.URL = u
	wire.Render(req.Header, c.varying, v)
	return c.req.Body.Append(nil, v), nil
}

// message writes a script's message (docs/scripts.md) into req, a copy of
// the client's, and returns its body.
func message(req *http.Request, m *plan.Message) ([]byte, error) {
	if m.Size() > plan.MaxRequestBytes {
		return nil, wire.ErrTooLarge
	}
	u, err := url.Parse(m.Target)
	if err != nil {
		return nil, err
	}
	req.Method = m.Method
	req.URL.Path, req.URL.RawPath, req.URL.RawQuery = u.Path, u.RawPath, u.RawQuery
	req.Header = make(http.Header, len(m.Header))
	for _, f := range m.Header {
		if f.Name == "Host" {
			req.Host = f.Value
			continue
		}
		req.Header.Add(f.Name, f.Value)
	}
	return m.Body, nil
}
