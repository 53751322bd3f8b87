package grpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/loadprobe/loadprobe/internal/grpcdesc"
	"github.com/loadprobe/loadprobe/plan"
	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// minResolveTime bounds asking the server for its descriptors from below:
// a request timeout of a few milliseconds is a budget for one call, not
// for the few round trips of reflection.
const minResolveTime = 5 * time.Second

// resolve finds the method req calls: a health check's in grpc-go's own
// descriptors, else in the descriptor set config read, else by asking the
// server (grpc.reflection.v1) for the file that defines the service and
// those it imports, within max(timeout, minResolveTime).
func (c *Client) resolve(ctx context.Context, req *plan.Request) (protoreflect.MethodDescriptor, error) {
	g := req.GRPC
	switch {
	case c.health:
		return healthpb.File_grpc_health_v1_health_proto.Services().Get(0).Methods().ByName("Check"), nil
	case g.Descriptors != nil:
		return grpcdesc.Method(g.Descriptors, g.Method)
	}
	svc, _, err := grpcdesc.SplitMethod(g.Method)
	if err != nil {
		return nil, err
	}
	cc, err := c.reflectionConn()
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(ctx, max(req.Timeout, minResolveTime))
	defer cancel()
	files, err := reflectFiles(ctx, cc, svc)
	if status.Code(err) == codes.Unimplemented {
		return nil, fmt.Errorf("the server does not serve reflection (grpc.reflection.v1: %w): set descriptors: FILE.protoset, "+
			"which protoc --include_imports --descriptor_set_out=FILE.protoset SERVICE.proto writes (docs/grpc.md, \"Descriptors\")", err)
	}
	if err != nil {
		return nil, fmt.Errorf("asking the server by reflection: %w", err)
	}
	return grpcdesc.Method(files, g.Method)
}

// reflectionConn is a grpc-go connection to the client's server, with its
// TLS settings, for the reflection service's stream.
func (c *Client) reflectionConn() (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if c.tls != nil {
		creds = credentials.NewTLS(c.tls)
	}
	return grpc.NewClient("passthrough:///"+c.addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent("loadprobe"),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return wire.Dial(ctx, addr, time.Time{})
		}))
}

// One resolution asks for at most maxReflectedFiles files and reads at
// most maxReflectedBytes of them: an ordinary API with its imports is a
// megabyte or two, and a server's answers must not cost gigabytes.
const (
	maxReflectedFiles = 1000
	maxReflectedBytes = 16 << 20
)

// reflectFiles asks the server for the file that defines svc and, one by
// one, for each file it imports that the answers did not hold.
func reflectFiles(ctx context.Context, cc *grpc.ClientConn, svc protoreflect.FullName) (*protoregistry.Files, error) {
	stream, err := rpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	got := map[string]*descriptorpb.FileDescriptorProto{}
	var order []string
	var read int
	ask := func(req *rpb.ServerReflectionRequest) error {
		if err := stream.Send(req); err != nil {
			return err
		}
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		if e := resp.GetErrorResponse(); e != nil {
			return fmt.Errorf("%s", e.GetErrorMessage())
		}
		fds := resp.GetFileDescriptorResponse()
		if fds == nil {
			return errors.New("the server answered without descriptors")
		}
		for _, b := range fds.GetFileDescriptorProto() {
			if read += len(b); read > maxReflectedBytes {
				return fmt.Errorf("the server's descriptors pass %d MiB, the most one resolution reads: use descriptors: FILE.protoset", maxReflectedBytes>>20)
			}
			fd := &descriptorpb.FileDescriptorProto{}
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("a descriptor the server sent: %w", err)
			}
			if _, ok := got[fd.GetName()]; !ok {
				got[fd.GetName()] = fd
				order = append(order, fd.GetName())
			}
		}
		return nil
	}
	if err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: string(svc)}}); err != nil {
		return nil, err
	}
	for i := 0; i < len(order) && len(order) < maxReflectedFiles; i++ {
		for _, dep := range got[order[i]].GetDependency() {
			if _, ok := got[dep]; ok {
				continue
			}
			if err := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}}); err != nil {
				return nil, fmt.Errorf("file %s: %w", dep, err)
			}
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, name := range order {
		set.File = append(set.File, got[name])
	}
	return protodesc.NewFiles(set)
}
