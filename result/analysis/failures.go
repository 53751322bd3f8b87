package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/loadprobe/loadprobe/result"
)

// failureKind is one kind of failed attempt: a status code outside
// valid_status_codes, or a reason for getting no response.
type failureKind struct {
	code   result.Code // the code of an http_error; zero for a reason
	reason string      // the reason of an attempt without a response
	n      int64
}

func (k failureKind) name() string {
	if k.reason != "" {
		return k.reason
	}
	return k.code.String()
}

// reasonMeanings name the failure kinds by what they say about the target
// (docs/design.md, "Four failure states").
var reasonMeanings = map[string]string{
	"timeout": "the client's own deadline passed first",
	"refused": "the server never answered: connection refused",
	"reset":   "the server never answered: connection reset",
	"tls":     "the TLS handshake failed",
	"dns":     "the name did not resolve",
	"other":   "a transport error",
	"closed":  "the server closed the WebSocket session",
	// The generator's own: they say nothing of the target.
	"generator":         "the generator ran out of file descriptors: nothing reached the target",
	"request_too_large": "the request would render above its size bound: not sent",
	"script":            "the request's script erred or ran out of its bounds: not the target's failure",
	// The target's, by its script's judgement.
	"script_failed": "the request's script failed the response",
}

func (k failureKind) meaning() string {
	if k.reason != "" {
		return reasonMeanings[k.reason]
	}
	switch k.code.Class() {
	case result.ClassShed:
		return "shedding: capacity ran out"
	case result.ClassLimited:
		return "a limiter declining on purpose"
	case result.ClassDeadline:
		return "a deadline of the server's own passed"
	case result.ClassServerError:
		return "the server failed"
	case result.ClassClientError:
		return "the server rejected the request"
	case result.ClassRedirect:
		return "a redirect, not followed"
	}
	if k.code == result.CodeOther {
		return "statuses the shards' series count together: rare ones, or outside the registry"
	}
	return "a status outside valid_status_codes"
}

// failureKinds counts the failed attempts of steps by kind, most frequent
// first: the http_error responses by code and the attempts without a
// response by reason, as the recorder counted them.
func failureKinds(steps ...result.Step) []failureKind {
	codes, reasons := result.Codes{}, map[string]int64{}
	for _, s := range steps {
		for c, n := range s.HTTPErrors {
			codes[c] += n
		}
		for r, n := range s.Errors {
			reasons[r] += n
		}
	}
	kinds := make([]failureKind, 0, len(codes)+len(reasons))
	for c, n := range codes {
		if n > 0 {
			kinds = append(kinds, failureKind{code: c, n: n})
		}
	}
	for r, n := range reasons {
		if n > 0 {
			kinds = append(kinds, failureKind{reason: r, n: n})
		}
	}
	slices.SortFunc(kinds, func(x, y failureKind) int {
		return cmp.Or(cmp.Compare(y.n, x.n), cmp.Compare(x.code.Slot(), y.code.Slot()), strings.Compare(x.reason, y.reason))
	})
	return kinds
}

// describeFailures lists the failure kinds of steps, as shares of attempts:
// "503 on 37% of attempts (shedding: capacity ran out), timeout on 2% (...)".
func describeFailures(steps ...result.Step) string {
	var attempts int64
	for _, s := range steps {
		attempts += s.Attempts
	}
	kinds := failureKinds(steps...)
	if len(kinds) == 0 || attempts == 0 {
		return "failed attempts of no recorded kind"
	}
	const most = 3
	parts := make([]string, 0, most+1)
	for i, k := range kinds {
		if i == most {
			parts = append(parts, fmt.Sprintf("%d more kinds", len(kinds)-most))
			break
		}
		of := ""
		if i == 0 {
			of = " of attempts"
		}
		parts = append(parts, fmt.Sprintf("%s on %s%s (%s)", k.name(), fmtPct(float64(k.n)/float64(attempts)), of, k.meaning()))
	}
	return strings.Join(parts, ", ")
}

// topKind is the most frequent failure kind of steps; zero when none.
func topKind(steps ...result.Step) failureKind {
	kinds := failureKinds(steps...)
	if len(kinds) == 0 {
		return failureKind{}
	}
	return kinds[0]
}

// topFailure names the most frequent failure kind of steps: "429: a limiter
// declining on purpose".
func topFailure(steps ...result.Step) string {
	k := topKind(steps...)
	if k.n == 0 {
		return "failures of no recorded kind"
	}
	return k.name() + ": " + k.meaning()
}

// reasonPlurals name many failures of one reason.
var reasonPlurals = map[string]string{
	"timeout": "timeouts",
	"refused": "refused connections",
	"reset":   "reset connections",
	"tls":     "TLS failures",
	"dns":     "DNS failures",
	"other":   "transport errors",
	"closed":  "sessions closed by the server",
	// The generator's own, never the target's.
	"generator":         "attempts without a file descriptor",
	"request_too_large": "requests above the size bound",
	"script":            "script errors",
	"script_failed":     "responses the script failed",
}

// plural names many failures of k's kind: "429s", "timeouts".
func (k failureKind) plural() string {
	switch {
	case k.n == 0:
		return "failures"
	case k.reason != "":
		return reasonPlurals[k.reason]
	}
	return k.code.Plural()
}

func noResponses(s result.Step) int64 {
	var n int64
	for _, v := range s.Errors {
		n += v
	}
	return n
}

// topReason names the most frequent reason for an attempt without a response.
func topReason(s result.Step) string {
	best, bn := "", int64(0)
	for _, o := range result.NoResponseReasons {
		if n := s.Errors[o.String()]; n > bn {
			best, bn = o.String(), n
		}
	}
	return best
}
