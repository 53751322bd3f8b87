// Package promapi builds a client of a Prometheus server's query API from
// prometheus/common's HTTP client settings: the one way loadprobe's
// readers of Prometheus (the fleet reader, the Prometheus guards) reach it.
// Every query it sends is bounded in time and in the size of its answer,
// so that a Prometheus that never answers, or answers without end, costs
// loadprobe neither a goroutine and a connection per query nor its memory;
// and it follows no redirect, which could send the queries to a host no
// check has seen, or to loadprobe's own endpoints (docs/guards.md, "The
// guard's Prometheus").
package promapi

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	commoncfg "github.com/prometheus/common/config"
)

const (
	// QueryTimeout bounds one query, from its request to the answer's last
	// byte; callers with a tighter bound (a guard's interval) set their own
	// through the context.
	QueryTimeout = 30 * time.Second
	// MaxAnswerBytes bounds one answer's body, decompressed, unless the
	// caller bounds it tighter: a fleet's step series of one probe are a few
	// hundred bytes each. Decoding costs several times the body.
	MaxAnswerBytes = 32 << 20
)

// New returns the query API of the Prometheus at url, with its round
// tripper (whose idle connections a caller may close), reading at most
// maxAnswer bytes of an answer (at most MaxAnswerBytes). who names the
// caller in errors and in prometheus/common's client name.
func New(url string, cfg commoncfg.HTTPClientConfig, who string, maxAnswer int64) (v1.API, http.RoundTripper, error) {
	rt, err := commoncfg.NewRoundTripperFromConfig(cfg, "loadprobe_"+who)
	if err != nil {
		return nil, nil, fmt.Errorf("%s Prometheus HTTP settings: %w", who, err)
	}
	c, err := api.NewClient(api.Config{Address: url, Client: &http.Client{
		Transport:     bounded{rt, min(maxAnswer, MaxAnswerBytes)},
		Timeout:       QueryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}})
	if err != nil {
		return nil, nil, fmt.Errorf("%s Prometheus URL %q: %w", who, url, err)
	}
	return v1.NewAPI(c), rt, nil
}

// bounded hands on each answer's body cut at max bytes: reading past it
// fails, so that the client gives up instead of holding the rest.
type bounded struct {
	next http.RoundTripper
	max  int64
}

func (b bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, max: b.max, left: b.max}
	return resp, nil
}

// limitedBody fails a read once more than left bytes came.
type limitedBody struct {
	io.ReadCloser
	max, left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.tooLarge()
	}
	// One byte past the bound tells a body of exactly the bound from a larger one.
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.ReadCloser.Read(p)
	if l.left -= int64(n); l.left < 0 {
		return n, l.tooLarge()
	}
	return n, err
}

func (l *limitedBody) tooLarge() error {
	size := fmt.Sprintf("%d KiB", l.max>>10)
	if l.max%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", l.max>>20)
	}
	return fmt.Errorf("the answer is larger than %s, the most loadprobe reads of one query", size)
}
