// Package grpcdesc finds a gRPC method in a service's descriptors and
// writes its input message from JSON (docs/grpc.md, "Descriptors"), for
// the config's checks at load and the prober's at the start of a run.
package grpcdesc

import (
	"bytes"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ParseSet reads a FileDescriptorSet (protoc --descriptor_set_out, with
// --include_imports) into the files it holds.
func ParseSet(b []byte) (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("not a FileDescriptorSet: %w", err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("descriptors: %w (a set needs every file it imports: protoc --include_imports)", err)
	}
	return files, nil
}

// SplitMethod splits "package.Service/Method" into the service's full name
// and the method's.
func SplitMethod(method string) (service protoreflect.FullName, name protoreflect.Name, err error) {
	svc, m, ok := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	switch {
	case !ok || svc == "" || m == "" || strings.Contains(m, "/"):
		return "", "", fmt.Errorf("%q is not package.Service/Method", method)
	case !protoreflect.FullName(svc).IsValid() || !protoreflect.Name(m).IsValid():
		return "", "", fmt.Errorf("%q is not package.Service/Method: not a valid protobuf name", method)
	}
	return protoreflect.FullName(svc), protoreflect.Name(m), nil
}

// Method finds method ("package.Service/Method") among files.
func Method(files *protoregistry.Files, method string) (protoreflect.MethodDescriptor, error) {
	svc, name, err := SplitMethod(method)
	if err != nil {
		return nil, err
	}
	d, err := files.FindDescriptorByName(svc)
	if err != nil {
		return nil, fmt.Errorf("no service %s in the descriptors", svc)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", svc)
	}
	md := sd.Methods().ByName(name)
	if md == nil {
		return nil, fmt.Errorf("service %s has no method %s", svc, name)
	}
	return md, nil
}

// CheckStream checks that md streams as kind says (bidi, client, server,
// or "" for a unary call) and that match, when set, names a field of one
// kind in both its input and its output: the field a reply echoes.
func CheckStream(md protoreflect.MethodDescriptor, kind, match string) error {
	streams := map[[2]bool]string{{false, false}: "", {true, true}: "bidi", {true, false}: "client", {false, true}: "server"}
	switch has := streams[[2]bool{md.IsStreamingClient(), md.IsStreamingServer()}]; {
	case has == kind:
	case has == "":
		return fmt.Errorf("%s is a unary method: grpc.stream applies to streaming methods", md.FullName())
	case kind == "":
		return fmt.Errorf("%s is a %s-streaming method: set grpc.stream", md.FullName(), has)
	default:
		return fmt.Errorf("%s is a %s-streaming method, not %s", md.FullName(), has, kind)
	}
	if match == "" {
		return nil
	}
	in := md.Input().Fields().ByName(protoreflect.Name(match))
	out := md.Output().Fields().ByName(protoreflect.Name(match))
	switch {
	case in == nil || out == nil:
		return fmt.Errorf("grpc.stream.match: %s and %s must both have a field %q", md.Input().FullName(), md.Output().FullName(), match)
	case in.Kind() != out.Kind() || in.Cardinality() == protoreflect.Repeated || out.Cardinality() == protoreflect.Repeated:
		return fmt.Errorf("grpc.stream.match: field %q must be a single value of one type in %s and %s", match, md.Input().FullName(), md.Output().FullName())
	}
	return nil
}

// Encode writes the JSON text of a message of type in (protojson: field
// names as in the .proto or in lowerCamelCase) in the wire format; an
// unknown field, a value of the wrong type or text that is not JSON is an
// error. No text at all is the empty message, {}.
func Encode(in protoreflect.MessageDescriptor, text []byte) ([]byte, error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, nil
	}
	msg := dynamicpb.NewMessage(in)
	if err := protojson.Unmarshal(text, msg); err != nil {
		// protobuf writes its errors with a space that is at random a
		// non-breaking one, so that none is relied on; a config error is
		// read by people, and tested.
		why := strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\u00a0", " "), "proto: ")
		return nil, fmt.Errorf("the message does not fit %s: %s", in.FullName(), why)
	}
	return proto.MarshalOptions{}.Marshal(msg)
}
