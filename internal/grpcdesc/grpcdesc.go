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

// Method finds method ("package.Service/Method") among files; a
// streaming method is an error, as only unary calls are probed.
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
	switch {
	case md == nil:
		return nil, fmt.Errorf("service %s has no method %s", svc, name)
	case md.IsStreamingClient() || md.IsStreamingServer():
		return nil, fmt.Errorf("%s is a streaming method: only unary methods are probed", method)
	}
	return md, nil
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
