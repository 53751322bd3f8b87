package grpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/grpcdesc"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/live"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
	"github.com/loadprobe/loadprobe/result"
)

// Streams opens the streams of one stream probe's run (docs/grpc.md,
// "Streams"). A stream is grpc-go's: its flow control, window updates and
// framing of many messages in both directions are what grpc-go does,
// while the lean HTTP/2 client is built for one request and its response.
// Its connections are the probe's own (wire.OpenConn: its dial, its TLS,
// its classification of a failure), grpc.connections of them, the
// streams spread over them in turn.
type Streams struct {
	c       *Client
	ccs     []*grpc.ClientConn
	next    atomic.Uint32
	desc    grpc.StreamDesc
	path    string // /package.Service/Method
	header  metadata.MD
	varying []plan.Field // metadata written per stream
	plan    plan.GRPCStream
	period  time.Duration // between a bidi or client stream's messages
	input   protoreflect.MessageDescriptor
	fixed   []byte             // the message, when it does not vary
	message *template.Template // else its JSON
	// sent and echoed are the numbers of the match field in the message
	// and the reply; 0: replies answer messages in order.
	sent, echoed protowire.Number
	live         live.Streams
	dialErr      atomic.Pointer[error] // the last dial's failure; nil after a dial that worked
	// newStream opens a stream on the next connection; tests give it a
	// stream of their own.
	newStream func(ctx context.Context) (grpc.ClientStream, error)
}

// NewStreams builds the streams of req, whose grpc.stream is set, as New
// builds a unary call's client: the method resolved and checked to stream
// as grpc.stream says. sink, which may be nil, takes the streams opened and
// ended.
func NewStreams(ctx context.Context, req *plan.Request, sink live.Streams) (*Streams, error) {
	c, err := newClient(req)
	if err != nil {
		return nil, err
	}
	mdesc, err := c.method(ctx, req)
	if err != nil {
		return nil, err
	}
	g := req.GRPC
	s := &Streams{c: c, plan: *g.Stream, path: "/" + g.Method, input: mdesc.Input(), live: sink, header: metadata.MD{}}
	if s.live == nil {
		s.live = live.NopStreams{}
	}
	kind := g.Stream.Kind
	s.desc = grpc.StreamDesc{StreamName: string(mdesc.Name()), ClientStreams: kind != plan.StreamServer, ServerStreams: kind != plan.StreamClient}
	if kind != plan.StreamServer {
		s.period = time.Duration(float64(time.Second) / g.Stream.MessagesPerSecond)
	}
	if m := g.Stream.Match; m != "" {
		s.sent = mdesc.Input().Fields().ByName(protoreflect.Name(m)).Number()
		s.echoed = mdesc.Output().Fields().ByName(protoreflect.Name(m)).Number()
	}
	if req.Authorization != "" {
		s.header.Set("authorization", req.Authorization)
	}
	for _, f := range g.Metadata {
		if text, fixed := f.Value.Literal(); fixed {
			s.header.Set(f.Name, text)
		} else {
			s.varying = append(s.varying, f)
		}
	}
	if text, fixed := g.Message.Literal(); fixed {
		if s.fixed, err = grpcdesc.Encode(s.input, []byte(text)); err != nil {
			return nil, fmt.Errorf("grpc.message: %w", err)
		}
	} else {
		s.message = g.Message
	}
	for range g.Connections {
		cc, err := s.dial()
		if err != nil {
			s.Close()
			return nil, err
		}
		s.ccs = append(s.ccs, cc)
	}
	s.newStream = func(ctx context.Context) (grpc.ClientStream, error) {
		cc := s.ccs[int(s.next.Add(1))%len(s.ccs)]
		return cc.NewStream(ctx, &s.desc, s.path)
	}
	return s, nil
}

// dial makes one of grpc-go's connections, over the probe's own dial and
// TLS: grpc-go sees a connection ready for HTTP/2, and a dial that fails
// leaves its error for outcome to classify.
func (s *Streams) dial() (*grpc.ClientConn, error) {
	c := s.c
	return grpc.NewClient("passthrough:///"+c.addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent("loadprobe"),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(wire.MaxBodyBytes)),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			deadline := time.Now().Add(c.timeout)
			if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
				deadline = d
			}
			nc, raw, err := wire.OpenConn(c.aborted, addr, c.tls, deadline, &c.conns)
			if err == nil {
				err = raw.SetDeadline(time.Time{}) // the dial's: grpc-go reads and writes without one
			}
			if err != nil {
				s.dialErr.Store(&err)
				return nil, err
			}
			s.dialErr.Store(nil)
			return nc, nil
		}))
}

// NewStream returns one user's stream, whose templated messages and
// metadata are written with vars; next, when not nil, sets vars to the
// values of the next message.
func (s *Streams) NewStream(vars *template.Vars, next func()) wire.Stream {
	return &stream{s: s, vars: vars, next: next, timer: time.NewTimer(time.Hour)}
}

// Abort cuts short every stream and dial under way and closes the
// connections.
func (s *Streams) Abort() {
	s.c.abort()
	s.Close()
}

// Close closes the connections.
func (s *Streams) Close() {
	for _, cc := range s.ccs {
		cc.Close()
	}
	s.c.Close()
}

// open opens a stream on the next connection, with the metadata written
// with vars, and counts it. The stream lives until ctx ends.
func (s *Streams) open(ctx context.Context, vars *template.Vars) (grpc.ClientStream, error) {
	md := s.header
	if s.varying != nil {
		md = s.header.Copy()
		for _, f := range s.varying {
			md.Set(f.Name, string(f.Value.Append(nil, vars)))
		}
	}
	cs, err := s.newStream(metadata.NewOutgoingContext(ctx, md))
	if err != nil {
		_, o := s.outcome(err)
		s.live.StreamOpened(o)
		return nil, err
	}
	s.live.StreamOpened(result.Success)
	return cs, nil
}

// outcome names how a stream ended with err, as a unary call's outcome
// names a call's end: a status the server sent is an http_error with that
// status as its code, OK before the stream's end `closed`; a dial that
// failed is classified as an HTTP request's; a connection lost under the
// stream is `reset`. grpc-go reports the last two as UNAVAILABLE statuses
// of its own, told apart here by the words its transport writes.
func (s *Streams) outcome(err error) (result.Code, result.Outcome) {
	var u unsent
	switch {
	case errors.As(err, &u):
		return result.Code{}, result.Outcome(u)
	case errors.Is(err, io.EOF):
		return result.GRPCStatus(0), result.Closed
	}
	st := status.Convert(err)
	msg := st.Message()
	switch {
	case st.Code() == codes.DeadlineExceeded:
		return result.Code{}, result.Timeout
	case st.Code() == codes.Unavailable && strings.HasPrefix(msg, "connection error"):
		if dialErr := s.dialErr.Load(); dialErr != nil {
			return result.Code{}, wire.Classify(*dialErr)
		}
		return result.Code{}, result.Reset
	case lostConnection(msg):
		return result.Code{}, result.Reset
	}
	return result.GRPCStatus(uint32(st.Code())), result.HTTPError
}

// lostConnection reports grpc-go's words for a stream whose connection
// or stream the peer reset or closed.
func lostConnection(msg string) bool {
	for _, words := range []string{"error reading from server", "transport is closing", "RST_STREAM", "connection closed"} {
		if strings.Contains(msg, words) {
			return true
		}
	}
	return false
}

// message is the next message to send, written anew when it varies:
// grpc-go may still hold the one before, unsent, so it is never reused.
// A message that cannot be written is not sent: request_too_large above
// the bound, other when a value of the data does not fit the message's
// type.
func (st *stream) message() ([]byte, result.Outcome) {
	s := st.s
	if s.message == nil {
		return s.fixed, result.Success
	}
	if st.next != nil {
		st.next()
	}
	if s.c.call.Size(st.vars) > plan.MaxRequestBytes {
		return nil, result.TooLarge
	}
	msg, err := grpcdesc.Encode(s.input, s.message.Append(nil, st.vars))
	if err != nil {
		return nil, result.Other
	}
	return msg, result.Success
}

// key is what pairs a bidi reply with its message: the match field's
// encoded value ("" when absent, protobuf's default), or "" for all when
// replies answer in order.
func key(msg []byte, num protowire.Number) string {
	if num == 0 {
		return ""
	}
	v, _, _ := findField(msg, num)
	return string(v)
}

// rawCodec hands grpc-go messages already encoded, and reads of a reply
// only the key that pairs it with its message.
type rawCodec struct{}

// reply is what rawCodec reads of a reply.
type reply struct {
	field protowire.Number
	key   string
}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*reply); ok && r.field != 0 {
		r.key = key(data.Materialize(), r.field)
	}
	return nil
}

// Name is the content subtype: grpc-go's codec for protobuf, whose
// messages these are.
func (rawCodec) Name() string { return "proto" }
