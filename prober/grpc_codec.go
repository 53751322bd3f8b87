package prober

import (
	"fmt"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawCodec hands grpc-go a message encoded already and drops the reply
// unread, so that a call costs no encoding and no decoding: the probe
// measures the service, not protobuf. It names itself "proto", which the
// content type says (application/grpc+proto): the bytes are protobuf's.
type rawCodec struct{}

// rawMessage is a call's encoded message; it is only read.
type rawMessage []byte

// rawReply is a call's reply: dropped, or for a health check read for its
// status.
type rawReply struct {
	keep   bool  // read the status of a HealthCheckResponse
	status int32 // that status (0: UNKNOWN)
}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*rawMessage)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*m)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*rawReply)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	if !r.keep {
		return nil
	}
	status, err := healthStatus(data.Materialize())
	r.status = status
	return err
}

// healthStatus reads field 1 (status) of a grpc.health.v1
// HealthCheckResponse.
func healthStatus(b []byte) (int32, error) {
	var status int32
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 1 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, protowire.ParseError(n)
			}
			status, b = int32(v), b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return status, nil
}
