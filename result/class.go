package result

// Class is what a response's code means, whatever the protocol that
// answered it (docs/metrics.md, "Response codes"): the analysis judges
// classes, never a protocol's numbers.
type Class uint8

// The classes of codes.
const (
	// ClassOther is a code no class below fits: an interim status, one
	// past a protocol's own, the codes counted together as "other".
	ClassOther Class = iota
	// ClassSuccess is a code that reads as done: a 2xx, gRPC's OK. Whether
	// it counts as a success is the probe's (valid_status_codes).
	ClassSuccess
	// ClassShed is a server shedding load because its capacity ran out:
	// 503, UNAVAILABLE.
	ClassShed
	// ClassLimited is a limiter declining on purpose: 429,
	// RESOURCE_EXHAUSTED.
	ClassLimited
	// ClassDeadline is a deadline of the server's own (or a proxy's):
	// 408, 504, DEADLINE_EXCEEDED.
	ClassDeadline
	// ClassClientError is the request refused as it is: a 4xx, gRPC's
	// INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED and their kin.
	ClassClientError
	// ClassServerError is the server failing: a 5xx, gRPC's UNKNOWN,
	// INTERNAL, DATA_LOSS, a health check not SERVING.
	ClassServerError
	// ClassRedirect is a redirect the probe does not follow: a 3xx.
	ClassRedirect
)

var classNames = [...]string{"other", "success", "shed", "limited", "deadline", "client_error", "server_error", "redirect"}

func (c Class) String() string { return classNames[c] }

// grpcClasses are the classes of gRPC's statuses and a health check's
// answers, by number.
var grpcClasses = [len(grpcNames)]Class{
	ClassSuccess,     // OK
	ClassOther,       // CANCELLED
	ClassServerError, // UNKNOWN
	ClassClientError, // INVALID_ARGUMENT
	ClassDeadline,    // DEADLINE_EXCEEDED
	ClassClientError, // NOT_FOUND
	ClassClientError, // ALREADY_EXISTS
	ClassClientError, // PERMISSION_DENIED
	ClassLimited,     // RESOURCE_EXHAUSTED
	ClassClientError, // FAILED_PRECONDITION
	ClassClientError, // ABORTED
	ClassClientError, // OUT_OF_RANGE
	ClassClientError, // UNIMPLEMENTED
	ClassServerError, // INTERNAL
	ClassShed,        // UNAVAILABLE
	ClassServerError, // DATA_LOSS
	ClassClientError, // UNAUTHENTICATED
	ClassServerError, // NOT_SERVING
	ClassServerError, // SERVING_UNKNOWN
}

// Class is the code's class.
func (c Code) Class() Class {
	switch c.Protocol {
	case GRPC:
		if int(c.Number) < len(grpcClasses) {
			return grpcClasses[c.Number]
		}
	case HTTP:
		return httpClass(c.Number)
	}
	return ClassOther
}

func httpClass(n uint16) Class {
	switch {
	case n == 503:
		return ClassShed
	case n == 429:
		return ClassLimited
	case n == 408 || n == 504:
		return ClassDeadline
	case n >= 200 && n < 300:
		return ClassSuccess
	case n >= 300 && n < 400:
		return ClassRedirect
	case n >= 400 && n < 500:
		return ClassClientError
	case n >= 500 && n < 600:
		return ClassServerError
	}
	return ClassOther
}
