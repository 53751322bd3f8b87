package result

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The codes of responses (docs/metrics.md, "Response codes"). A transport
// names what its protocol answered as a Code: an HTTP status, or a gRPC
// status (a health check's answers among them). A code is named as its
// protocol names it ("503", "UNAVAILABLE"); its Class says what it means
// without the protocol, and is what the analysis judges.

// Protocol is the protocol whose numbers a Code holds.
type Protocol uint8

// The protocols of codes.
const (
	// NoProtocol is the zero Code's: no response.
	NoProtocol Protocol = iota
	HTTP
	GRPC
	// Others is the code of the responses that a bounded code label
	// counts together as "other" (docs/metrics.md, "Label values a
	// target chooses"): a fleet's step, summed from its shards' series,
	// knows them only so.
	Others
)

// Code is what one response answered. The zero Code is no response.
type Code struct {
	Protocol Protocol
	Number   uint16
}

// HTTPStatus is the code of HTTP status n.
func HTTPStatus(n int) Code { return Code{HTTP, uint16(n)} }

// GRPCStatus is the code of gRPC status s; a status beyond the ones gRPC
// defines is UNKNOWN's, as grpc-go reads it.
func GRPCStatus(s uint32) Code {
	if s > 16 {
		s = 2
	}
	return Code{GRPC, uint16(s)}
}

// The codes of a health check (grpc.health.v1 Check) answered NOT_SERVING,
// or UNKNOWN (a service whose status is not set), after gRPC's 17 statuses;
// and of the codes counted together as "other".
var (
	GRPCNotServing     = Code{GRPC, 17}
	GRPCServingUnknown = Code{GRPC, 18}
	CodeOther          = Code{Protocol: Others}
)

// grpcNames are the gRPC status codes by number (google.golang.org/grpc/codes),
// then the answers of a health check that are not SERVING, which a health
// probe counts as failures (docs/grpc.md, "Health probes").
var grpcNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED", "NOT_SERVING", "SERVING_UNKNOWN",
}

// String is the code as its protocol names it: the `code` label's value.
func (c Code) String() string {
	switch c.Protocol {
	case GRPC:
		if int(c.Number) < len(grpcNames) {
			return grpcNames[c.Number]
		}
	case Others:
		return "other"
	}
	return strconv.Itoa(int(c.Number))
}

// Plural names many responses of the code: "429s", "UNAVAILABLE statuses".
func (c Code) Plural() string {
	switch c.Protocol {
	case GRPC:
		return c.String() + " statuses"
	case Others:
		return "responses of other codes"
	}
	return c.String() + "s"
}

// ParseCode reads a code's name (String) back.
func ParseCode(name string) (Code, error) {
	if name == "other" {
		return CodeOther, nil
	}
	for i, n := range grpcNames {
		if n == name {
			return Code{GRPC, uint16(i)}, nil
		}
	}
	n, err := strconv.Atoi(name)
	if err != nil || n < 0 || n >= CodeSlots {
		return Code{}, fmt.Errorf("response code %q: neither an HTTP status nor a gRPC status name", name)
	}
	return HTTPStatus(n), nil
}

// CodeSlots is the size of a table with a slot per code (Slot): the
// recorders count responses in one, without a map on the hot path.
const CodeSlots = 1000

// grpcSlot is the slot of gRPC's OK; status s has grpcSlot+s, below HTTP's
// lowest status.
const grpcSlot = 10

// Slot is the code's index in a table of CodeSlots: an HTTP status its
// number (a number from 1000 up shares slot 0 with no response), a gRPC
// status one below 100, "other" 1.
func (c Code) Slot() int {
	switch c.Protocol {
	case GRPC:
		return grpcSlot + int(c.Number)
	case Others:
		return 1
	case HTTP:
		if c.Number < CodeSlots {
			return int(c.Number)
		}
	}
	return 0
}

// CodeAt is the code of slot i of a table (Slot's inverse).
func CodeAt(i int) Code {
	switch {
	case i == 0:
		return Code{}
	case i == 1:
		return CodeOther
	case i >= grpcSlot && i < grpcSlot+len(grpcNames):
		return Code{GRPC, uint16(i - grpcSlot)}
	}
	return HTTPStatus(i)
}

// Codes counts responses by code. In JSON its keys are the codes' names:
// {"200": 5, "503": 1} for HTTP, {"OK": 5, "UNAVAILABLE": 1} for gRPC.
type Codes map[Code]int64

// Named keys c by the codes' names ("503", "UNAVAILABLE"), as the metrics
// label them.
func (c Codes) Named() map[string]int64 {
	named := make(map[string]int64, len(c))
	for code, n := range c {
		named[code.String()] = n
	}
	return named
}

// Counts formats counts by code or reason as "200:490 503:12", sorted,
// leaving zeros out; "-" when none is left.
func Counts[K cmp.Ordered](m map[K]int64) string {
	keys := make([]K, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "-"
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprint(k) + ":" + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, " ")
}

// MarshalJSON writes the counts under the codes' names.
func (c Codes) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	named := make(map[string]int64, len(c))
	for code, n := range c {
		named[code.String()] = n
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
