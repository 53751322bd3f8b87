package target

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The demo target's gRPC service (docs/grpc.md, "The demo service"):
// loadprobe.demo.v1.Target, whose unary methods behave as the HTTP routes
// of the same names. Its descriptor is built here, in Go, so that the
// target needs no protoc: the handlers read and write dynamic messages.
//
//	syntax = "proto3";
//	package loadprobe.demo.v1;
//	message Request { int64 n = 1; }  // ignored
//	message Reply   { int64 n = 1; }  // the request's n, echoed
//	service Target {
//	  rpc Noop(Request) returns (Reply);     // at once
//	  rpc Work(Request) returns (Reply);     // one of --workers slots for --work-time
//	  rpc Shed(Request) returns (Reply);     // UNAVAILABLE above 8 in flight
//	  rpc Limited(Request) returns (Reply);  // RESOURCE_EXHAUSTED above 400 per second
//	  rpc Echo(stream Request) returns (stream Reply);  // each n echoed after Work's wait
//	  rpc Tick(Request) returns (stream Reply);  // n replies a second, numbered
//	}

// GRPCService is the full name of the demo service.
const GRPCService = "loadprobe.demo.v1.Target"

// grpcFile is the descriptor of the demo service's file.
var grpcFile = func() protoreflect.FileDescriptor {
	field := func() []*descriptorpb.FieldDescriptorProto {
		return []*descriptorpb.FieldDescriptorProto{{
			Name: proto.String("n"), JsonName: proto.String("n"), Number: proto.Int32(1),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:  descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(),
		}}
	}
	method := func(name string) *descriptorpb.MethodDescriptorProto {
		return &descriptorpb.MethodDescriptorProto{Name: proto.String(name),
			InputType: proto.String(".loadprobe.demo.v1.Request"), OutputType: proto.String(".loadprobe.demo.v1.Reply")}
	}
	streaming := func(name string, client bool) *descriptorpb.MethodDescriptorProto {
		m := method(name)
		m.ClientStreaming, m.ServerStreaming = proto.Bool(client), proto.Bool(true)
		return m
	}
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:    proto.String("loadprobe/demo/v1/target.proto"),
		Package: proto.String("loadprobe.demo.v1"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Request"), Field: field()},
			{Name: proto.String("Reply"), Field: field()},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("Target"),
			Method: []*descriptorpb.MethodDescriptorProto{method("Noop"), method("Work"), method("Shed"), method("Limited"),
				streaming("Echo", true), streaming("Tick", false)},
		}},
	}, nil)
	if err != nil {
		panic(err) // a mistake in the literal above, found by any test
	}
	return fd
}()

//go:generate go test -run TestProtoset -update .

// Protoset is the demo service's FileDescriptorSet, as protoc
// --descriptor_set_out writes it: what a probe's grpc.descriptors names
// instead of asking by reflection. target.protoset holds it.
func Protoset() []byte {
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(grpcFile)}}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		panic(err)
	}
	return b
}

// grpcN is the n field of Request and Reply.
var (
	grpcRequest = grpcFile.Messages().ByName("Request")
	grpcReply   = grpcFile.Messages().ByName("Reply")
	grpcN       = grpcRequest.Fields().ByName("n")
	grpcReplyN  = grpcReply.Fields().ByName("n")
)

var (
	errGRPCShed    = status.Error(codes.Unavailable, "overloaded: shedding")
	errGRPCLimited = status.Error(codes.ResourceExhausted, "rate limited")
)

// grpcMethod is a handler of the service: what it answers a request with.
type grpcMethod func(t *Target, ctx context.Context) error

var grpcMethods = map[string]grpcMethod{
	"Noop": func(*Target, context.Context) error { return nil },
	"Work": func(t *Target, ctx context.Context) error {
		if !t.work(ctx.Done()) {
			return status.FromContextError(ctx.Err()).Err()
		}
		return nil
	},
	"Shed": func(t *Target, _ context.Context) error {
		if !t.shed() {
			return errGRPCShed
		}
		return nil
	},
	"Limited": func(t *Target, _ context.Context) error {
		if !t.limit.allow(time.Now().Unix()) {
			return errGRPCLimited
		}
		return nil
	},
}

// RegisterGRPC registers t's service on s, with the standard health
// service (the demo service and the server SERVING) and server reflection.
func (t *Target) RegisterGRPC(s *grpc.Server) {
	sd := &grpc.ServiceDesc{ServiceName: GRPCService, HandlerType: (*any)(nil), Metadata: grpcFile.Path()}
	methods := grpcFile.Services().Get(0).Methods()
	for i := range methods.Len() {
		name := string(methods.Get(i).Name())
		do, ok := grpcMethods[name]
		if !ok {
			continue // a stream (grpcStreams)
		}
		sd.Methods = append(sd.Methods, grpc.MethodDesc{
			MethodName: name,
			Handler: func(_ any, ctx context.Context, dec func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
				req := dynamicpb.NewMessage(grpcRequest)
				if err := dec(req); err != nil {
					return nil, err
				}
				handle := func(ctx context.Context, req any) (any, error) {
					if err := do(t, ctx); err != nil {
						return nil, err
					}
					return reply(req.(*dynamicpb.Message).Get(grpcN).Int()), nil
				}
				if intercept == nil {
					return handle(ctx, req)
				}
				info := &grpc.UnaryServerInfo{Server: t, FullMethod: "/" + GRPCService + "/" + name}
				return intercept(ctx, req, info, handle)
			},
		})
	}
	sd.Streams = t.grpcStreams()
	s.RegisterService(sd, t)
	hs := health.NewServer()
	hs.SetServingStatus(GRPCService, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	files := new(protoregistry.Files)
	for _, fd := range []protoreflect.FileDescriptor{grpcFile, healthpb.File_grpc_health_v1_health_proto} {
		if err := files.RegisterFile(fd); err != nil {
			panic(err)
		}
	}
	// Reflection answers from the demo's own files (not the process's
	// global registry, which the demo service is not in), in both
	// versions of the protocol: clients still ask in v1alpha too.
	ro := reflection.ServerOptions{Services: s, DescriptorResolver: files, ExtensionResolver: new(protoregistry.Types)}
	rpb.RegisterServerReflectionServer(s, reflection.NewServerV1(ro))
	rpbalpha.RegisterServerReflectionServer(s, reflection.NewServer(ro))
}

// ServeGRPC serves a new demo target's gRPC service on addr, which must be
// a loopback address, until ctx is done, as Serve serves its HTTP routes.
func ServeGRPC(ctx context.Context, addr string, opts Options, logger *slog.Logger, ready func(net.Addr)) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := checkTargetAddr(addr); err != nil {
		return err
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s := grpc.NewServer()
	New(opts).RegisterGRPC(s)
	logger.Info("Demo target serving gRPC", "address", ln.Addr().String(), "service", GRPCService)
	if ready != nil {
		ready(ln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() { s.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(targetShutdownGrace):
		s.Stop()
	}
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}
