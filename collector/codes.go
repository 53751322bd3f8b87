package collector

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/loadprobe/loadprobe/result"
)

// The target chooses the status codes and close codes it answers with, so
// their label values are bounded here, whatever it sends (docs/metrics.md,
// "Label values a target chooses"): a code outside the known set counts
// under "other", and so does a known one once a probe has had
// maxCodesPerProbe distinct codes.

// OtherCode is the code label of every code without one of its own.
var OtherCode = result.CodeOther.String()

// maxCodesPerProbe bounds the distinct code label values of one probe, in
// each family that has a code label, "other" aside.
const maxCodesPerProbe = 20

// knownStatus reports an HTTP status code of the IANA registry (those
// net/http names) or a gRPC status (docs/metrics.md, "Response codes").
func knownStatus(code result.Code) bool {
	return code.Protocol == result.GRPC || code.Protocol == result.HTTP && http.StatusText(int(code.Number)) != ""
}

// knownCloseCode reports a WebSocket close code of the registered ranges:
// RFC 6455's 1000–1015, 3000–3999 (registered with IANA) and 4000–4999
// (private use).
func knownCloseCode(code closeCode) bool {
	return 1000 <= code && code <= 1015 || 3000 <= code && code <= 4999
}

// closeCode is a WebSocket close code, named by its number.
type closeCode int

func (c closeCode) String() string { return strconv.Itoa(int(c)) }

// codeLabels gives the code label values of one probe's live series
// (response codes, or close codes): a known code its own, until the probe
// has had maxCodesPerProbe of them, in the order they came; any other code
// "other". A probe's flow steps share it.
type codeLabels[C interface {
	comparable
	String() string
}] struct {
	known func(C) bool
	mu    sync.Mutex
	seen  map[C]bool
}

func newCodeLabels[C interface {
	comparable
	String() string
}](known func(C) bool) *codeLabels[C] {
	return &codeLabels[C]{known: known, seen: map[C]bool{}}
}

func (s *codeLabels[C]) label(code C) string {
	if !s.known(code) {
		return OtherCode
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.seen[code] {
		if len(s.seen) >= maxCodesPerProbe {
			return OtherCode
		}
		s.seen[code] = true
	}
	return code.String()
}

// stepCodeLabels gives the code label value of every status code in a
// run's steps: a known code its own, the most frequent first, up to
// maxCodesPerProbe of them; any other code "other". The steps' figures
// keep every code (docs/results.md); only the series are bounded.
func stepCodeLabels(steps []result.Step) map[result.Code]string {
	totals := result.Codes{}
	for i := range steps {
		for code, n := range steps[i].Responses {
			totals[code] += n
		}
	}
	codes := make([]result.Code, 0, len(totals))
	for code := range totals {
		if knownStatus(code) {
			codes = append(codes, code)
		}
	}
	slices.SortFunc(codes, func(a, b result.Code) int {
		return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a.Slot(), b.Slot()))
	})
	labels := make(map[result.Code]string, len(totals))
	for code := range totals {
		labels[code] = OtherCode
	}
	for _, code := range codes[:min(len(codes), maxCodesPerProbe)] {
		labels[code] = code.String()
	}
	return labels
}
