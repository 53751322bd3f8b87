package result

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The code space (docs/metrics.md, "Response codes"): a response's code is
// an HTTP status (three digits, 100-999), or a gRPC status in the two-digit
// range below them, so that one int carries either through Conn.Do, the
// recorder's tables and the collector's cache, and no code of one protocol
// can be taken for one of the other. A code is named as its protocol names
// it: "503", "UNAVAILABLE". 0 is no response.

// grpcBase is the code of gRPC's OK; status s is grpcBase+s.
const grpcBase = 10

// grpcNames are the gRPC status codes by number (google.golang.org/grpc/codes),
// then the answers of grpc.health.v1 Check that are not SERVING, which a
// health probe counts as failures (docs/grpc.md, "Health probes").
var grpcNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
	GRPCNotServing - grpcBase:     "NOT_SERVING",
	GRPCServingUnknown - grpcBase: "SERVING_UNKNOWN",
}

// GRPCCode is the code of gRPC status s; a status beyond the ones gRPC
// defines is UNKNOWN's, as grpc-go reads it.
func GRPCCode(s uint32) int {
	if s > 16 {
		s = 2
	}
	return grpcBase + int(s)
}

// GRPCNotServing and GRPCServingUnknown are the codes of a health check
// answered NOT_SERVING, or UNKNOWN (a service whose status is not set):
// after the 17 statuses.
const (
	GRPCNotServing     = grpcBase + 17
	GRPCServingUnknown = grpcBase + 18
)

// GRPC codes of the statuses the vocabulary reads.
var (
	grpcUnavailable       = GRPCCode(14)
	grpcResourceExhausted = GRPCCode(8)
	grpcDeadlineExceeded  = GRPCCode(4)
)

// CodeOther stands for the codes a bounded code label counts together as
// "other" (docs/metrics.md, "Label values a target chooses"): a fleet's
// step, summed from its shards' series, knows them only so. It is neither
// an HTTP nor a gRPC code, and never a success.
const CodeOther = 1

// CodeName is code as its protocol names it, the `code` label's value.
func CodeName(code int) string {
	switch {
	case IsGRPC(code):
		return grpcNames[code-grpcBase]
	case code == CodeOther:
		return "other"
	}
	return strconv.Itoa(code)
}

// IsGRPC reports a code of the gRPC range: a status or a health answer.
func IsGRPC(code int) bool {
	i := code - grpcBase
	return i >= 0 && i < len(grpcNames)
}

// ParseCode reads a code's name (CodeName) back.
func ParseCode(name string) (int, error) {
	if name == "other" {
		return CodeOther, nil
	}
	for i, n := range grpcNames {
		if n == name {
			return grpcBase + i, nil
		}
	}
	code, err := strconv.Atoi(name)
	if err != nil {
		return 0, fmt.Errorf("response code %q: neither an HTTP status nor a gRPC status name", name)
	}
	return code, nil
}

// Codes counts responses by code. In JSON its keys are the codes' names:
// {"200": 5, "503": 1} for HTTP as before, {"OK": 5, "UNAVAILABLE": 1} for
// gRPC.
type Codes map[int]int64

// MarshalJSON writes the counts under the codes' names.
func (c Codes) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	named := make(map[string]int64, len(c))
	for code, n := range c {
		named[CodeName(code)] = n
	}
	return json.Marshal(named)
}

// UnmarshalJSON reads counts under the codes' names.
func (c *Codes) UnmarshalJSON(b []byte) error {
	var named map[string]int64
	if err := json.Unmarshal(b, &named); err != nil {
		return err
	}
	if named == nil {
		*c = nil
		return nil
	}
	*c = make(Codes, len(named))
	for name, n := range named {
		code, err := ParseCode(name)
		if err != nil {
			return err
		}
		(*c)[code] = n
	}
	return nil
}
