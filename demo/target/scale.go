package target

import (
	"net/http"
	"time"
)

// The /scale route follows the Universal Scalability Law (docs/model.md):
// a closed loop of N connections gets
// X(N) = ScaleLambda·N / (1 + ScaleSigma·(N−1) + ScaleKappa·N(N−1))
// responses per second, peaking at N* = √((1−σ)/κ) ≈ 21.8 connections
// (about 740/s) and falling past it, so a ramp's fitted model has all of
// σ, κ and N* to show.
const (
	ScaleSigma  = 0.05
	ScaleKappa  = 0.002
	ScaleLambda = 100.0 // per second: one request alone takes 10ms
)

// ScaleHold is how long /scale holds a request that arrives with n requests
// in flight (itself included): N / X(N), the law's response time.
func ScaleHold(n int64) time.Duration {
	f := float64(n)
	return time.Duration((1 + ScaleSigma*(f-1) + ScaleKappa*f*(f-1)) / ScaleLambda * float64(time.Second))
}

// serveScale holds the request for ScaleHold of the requests in flight when
// it arrived, and answers 200 (503 when the client left first).
func (t *Target) serveScale(w http.ResponseWriter, r *http.Request) {
	n := t.scaleBusy.Add(1)
	defer t.scaleBusy.Add(-1)
	targetWait(w, r, ScaleHold(n))
}
