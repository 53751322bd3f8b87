package prober

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/loadprobe/loadprobe/config"
	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/grpcdesc"
	"github.com/loadprobe/loadprobe/result"
)

// A gRPC probe (docs/grpc.md) runs on the engine as an HTTP probe does: an
// attempt is one unary call. grpc-go carries the protocol; the client
// keeps grpc.connections ClientConns and hands each worker's Conn one of
// them in turn, so that a level of N calls in flight is N streams
// multiplexed over those connections.
//
// The hot path does no descriptor work: the method is resolved and a
// fixed message encoded once, when the client is built, and the encoded
// bytes go to grpc-go through a codec that passes them as they are
// (grpc_codec.go); the reply is not decoded (but a health check's status).

// grpcClient is the connector of one probe's gRPC call.
type grpcClient struct {
	method   string                         // "/package.Service/Method"
	input    protoreflect.MessageDescriptor // a templated message's type
	payload  []byte                         // the encoded message, when it does not vary
	message  *template.Template             // the message's JSON, when it varies
	health   bool                           // read the reply as a HealthCheckResponse
	base     context.Context                // ends on Abort; carries the fixed metadata
	cancel   context.CancelFunc
	varying  map[string]*template.Template // metadata rendered per call
	src      *varSource
	target   string
	timeout  time.Duration // request.timeout
	dialOpts []grpc.DialOption
	// certAsked says a server asked for a client certificate, which
	// tls_config has none of: under TLS 1.3 one that requires it rejects
	// the client after the client's handshake has ended, and the calls
	// find the connection closed (grpc_outcome.go).
	certAsked atomic.Bool
	callOpts  []grpc.CallOption
	slots     []*grpcSlot
	next      atomic.Uint64
}

// grpcSlot is one of the client's connections, made when a call first
// needs it and again after Close.
type grpcSlot struct {
	mu      sync.Mutex
	cc      *grpc.ClientConn
	dialErr atomic.Pointer[error] // the last failed dial's error; nil after a dial that worked
}

// newGRPCClient builds the client of req, which config has compiled: its
// TLS settings and static credentials (sent as authorization metadata),
// and the method, from the descriptor set config read or, with
// reflection, asked of the server now, bounded by a few timeouts: a run
// whose method cannot be resolved fails before it sends any load.
func newGRPCClient(req config.Request, src *varSource) (*grpcClient, error) {
	g := req.GRPC
	u, err := url.Parse(req.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("url %q: not grpc://host:port", req.URL)
	}
	c := &grpcClient{src: src, target: "passthrough:///" + u.Host, timeout: time.Duration(req.Timeout), callOpts: []grpc.CallOption{grpc.ForceCodecV2(rawCodec{})}}
	if err := c.setTransport(req, u); err != nil {
		return nil, err
	}
	md, err := c.fixedMetadata(req)
	if err != nil {
		return nil, err
	}
	c.base, c.cancel = context.WithCancel(metadata.NewOutgoingContext(context.Background(), md))
	c.slots = make([]*grpcSlot, g.Connections)
	for i := range c.slots {
		c.slots[i] = &grpcSlot{}
	}
	method, message := g.Method, g.Message
	if g.Health != nil {
		c.health, method = true, config.HealthMethod
		message = fmt.Sprintf(`{"service": %q}`, *g.Health)
	}
	c.method = "/" + method
	mdesc, err := c.resolve(g, method, time.Duration(req.Timeout))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("grpc method %s: %w", method, err)
	}
	c.input = mdesc.Input()
	if t := g.Templates; t != nil {
		if text, fixed := t.Message.Literal(); fixed {
			message = text
		} else {
			c.message = t.Message
			return c, nil
		}
	}
	if c.payload, err = grpcdesc.Encode(c.input, []byte(message)); err != nil {
		c.Close()
		return nil, fmt.Errorf("grpc.message: %w", err)
	}
	return c, nil
}

// setTransport sets the dial options every connection shares: plain HTTP/2
// for grpc://, TLS from tls_config for grpcs://. Each connection adds its
// own dialer, which remembers why a dial failed (grpcSlot.conn): grpc-go
// reports it only as text (grpc_outcome.go).
func (c *grpcClient) setTransport(req config.Request, u *url.URL) error {
	creds := insecure.NewCredentials()
	if u.Scheme == "grpcs" {
		tc, err := commoncfg.NewTLSConfig(&req.HTTPClientConfig.TLSConfig)
		if err != nil {
			return fmt.Errorf("tls_config: %w", err)
		}
		if len(tc.Certificates) == 0 && tc.GetClientCertificate == nil {
			tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				c.certAsked.Store(true)
				return &tls.Certificate{}, nil // none, as crypto/tls sends without the callback
			}
		}
		creds = credentials.NewTLS(tc)
	}
	c.dialOpts = []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// Each worker's call is its own: a call that failed is an
		// outcome, not something to retry.
		grpc.WithDisableRetry(),
		grpc.WithUserAgent("loadprobe"),
	}
	return nil
}

// fixedMetadata is the metadata every call sends: the credentials, and the
// metadata that does not vary; c.varying gets the rest.
func (c *grpcClient) fixedMetadata(req config.Request) (metadata.MD, error) {
	md := metadata.MD{}
	auth, err := staticAuthorization(req.HTTPClientConfig)
	if err != nil {
		return nil, err
	}
	if auth != "" {
		md.Set("authorization", auth)
	}
	g := req.GRPC
	for k, v := range g.Metadata {
		if t := g.Templates; t != nil {
			text, fixed := t.Metadata[k].Literal()
			if !fixed {
				if c.varying == nil {
					c.varying = map[string]*template.Template{}
				}
				c.varying[k] = t.Metadata[k]
				continue
			}
			v = text
		}
		md.Set(k, v)
	}
	return md, nil
}

// conn returns the slot's connection, making it when there is none. A
// ClientConn dials when a call first needs it, and again after a failure.
func (s *grpcSlot) conn(c *grpcClient) (*grpc.ClientConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cc != nil {
		return s.cc, nil
	}
	if err := c.base.Err(); err != nil {
		return nil, err
	}
	opts := append(c.dialOpts[:len(c.dialOpts):len(c.dialOpts)], grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := dial(ctx, addr, time.Time{})
		if err != nil {
			s.dialErr.Store(&err)
		} else {
			s.dialErr.Store(nil)
		}
		return conn, err
	}))
	cc, err := grpc.NewClient(c.target, opts...)
	if err != nil {
		return nil, err
	}
	s.cc = cc
	return cc, nil
}

func (s *grpcSlot) close() {
	s.mu.Lock()
	cc := s.cc
	s.cc = nil
	s.mu.Unlock()
	if cc != nil {
		_ = cc.Close()
	}
}

// NewConn returns one worker's Conn, on the next of the connections.
func (c *grpcClient) NewConn() Conn {
	slot := c.slots[(c.next.Add(1)-1)%uint64(len(c.slots))]
	return &grpcConn{client: c, slot: slot, vars: template.NewVars(0)}
}

// Abort cuts short every call under way and closes the connections.
func (c *grpcClient) Abort() {
	c.cancel()
	c.Close()
}

// Close closes the connections; a call afterwards dials again.
func (c *grpcClient) Close() {
	for _, s := range c.slots {
		s.close()
	}
}

// grpcConn is one worker's calls, on one of the client's connections.
type grpcConn struct {
	client *grpcClient
	slot   *grpcSlot
	vars   *template.Vars // the values of the call under way
	text   []byte         // a templated message's JSON, written anew per call
	msg    rawMessage
	reply  rawReply
	kv     []string // a templated metadata's pairs
}

// Do makes one call, ending it at deadline.
func (w *grpcConn) Do(deadline time.Time) (code int, o result.Outcome) {
	c := w.client
	cc, err := w.slot.conn(c)
	if err != nil {
		return 0, classify(err)
	}
	ctx := c.base
	if c.message != nil || c.varying != nil {
		if ctx, err = w.render(ctx); err != nil {
			return 0, result.Other
		}
	} else {
		w.msg = c.payload
	}
	w.reply.keep = c.health
	ctx, cancel := context.WithDeadline(ctx, deadline)
	err = cc.Invoke(ctx, c.method, &w.msg, &w.reply, c.callOpts...)
	expired := ctx.Err() == context.DeadlineExceeded
	cancel()
	return w.outcome(err, expired, deadline)
}

// render writes the call's templated message and metadata with the
// values of its attempt.
func (w *grpcConn) render(ctx context.Context) (context.Context, error) {
	c := w.client
	if c.src != nil {
		c.src.attempt(w.vars)
	}
	if c.message != nil {
		w.text = c.message.Append(w.text[:0], w.vars)
		b, err := grpcdesc.Encode(c.input, w.text)
		if err != nil {
			return nil, err
		}
		w.msg = b
	} else {
		w.msg = c.payload
	}
	if c.varying != nil {
		w.kv = w.kv[:0]
		for k, t := range c.varying {
			w.kv = append(w.kv, k, string(t.Append(nil, w.vars)))
		}
		ctx = metadata.AppendToOutgoingContext(ctx, w.kv...)
	}
	return ctx, nil
}

// Close does nothing: the connection is the client's, shared.
func (w *grpcConn) Close() {}
