package target

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The target exports its own Prometheus metrics on /metrics, as a service
// under load would, so that loadprobe's guards can be tried against a real
// Prometheus that scrapes it: http_requests_total{route,code},
// http_requests_in_flight, and the /work pool's workers_busy and workers,
// the saturation a probe's telemetry reads (docs/telemetry.md). The counters are atomic adds into a fixed
// table, read at scrape: a request takes no lock for them.

// routes are the route label values: the demo routes, and "other" for any
// path the target does not serve.
var routes = []string{"/noop", "/work", "/shed", "/limited", "/leak", "/flaky", "/collapse", "/slow",
	"/delay", "/status", "/ws", "/ws-limited", "/", "/login", "/items/{id}", "other"}

// routeIndex maps a path to its route's index in routes.
var routeIndex = func() map[string]int {
	m := make(map[string]int, len(routes))
	for i, r := range routes {
		m[r] = i
	}
	return m
}()

// declared are the codes each route exports from the start, at 0: the
// ones a query judging the route reads (a rate over a series that does not
// exist yet is no sample, not zero).
var declared = map[string][]int{
	"/shed": {200, 503}, "/leak": {200, 503}, "/flaky": {200, 503}, "/limited": {200, 429}, "/work": {200}, "/noop": {200},
}

const maxCodes = 600 // status codes 0..599; 0 counts any other

// targetMetrics holds the counters and serves them.
type targetMetrics struct {
	requests [][maxCodes]atomic.Uint64 // by route index, then code
	inFlight atomic.Int64
	// workers reads the /work pool: its workers busy now, and its size.
	workers func() (busy, size int)
	handler http.Handler
}

func newTargetMetrics(workers func() (busy, size int)) *targetMetrics {
	m := &targetMetrics{requests: make([][maxCodes]atomic.Uint64, len(routes)), workers: workers}
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

var (
	requestsDesc = prometheus.NewDesc("http_requests_total", "HTTP requests the demo target answered, by route and status code.", []string{"route", "code"}, nil)
	inFlightDesc = prometheus.NewDesc("http_requests_in_flight", "HTTP requests the demo target is serving now.", nil, nil)
	busyDesc     = prometheus.NewDesc("workers_busy", "Workers of the /work pool holding a job now.", nil, nil)
	workersDesc  = prometheus.NewDesc("workers", "Workers of the /work pool.", nil, nil)
)

func (m *targetMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- requestsDesc
	ch <- inFlightDesc
	ch <- busyDesc
	ch <- workersDesc
}

func (m *targetMetrics) Collect(ch chan<- prometheus.Metric) {
	for ri, route := range routes {
		for code := range m.requests[ri] {
			n := m.requests[ri][code].Load()
			if n == 0 && !isDeclared(route, code) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(n), route, strconv.Itoa(code))
		}
	}
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(m.inFlight.Load()))
	busy, size := m.workers()
	ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.GaugeValue, float64(busy))
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(size))
}

func isDeclared(route string, code int) bool {
	for _, c := range declared[route] {
		if c == code {
			return true
		}
	}
	return false
}

// routeOf is the route label of a path.
func routeOf(path string) int {
	if i, ok := routeIndex[path]; ok {
		return i
	}
	if strings.HasPrefix(path, "/items/") {
		return routeIndex["/items/{id}"]
	}
	return routeIndex["other"]
}

// counted serves r with serve and counts it by route and code.
func (m *targetMetrics) counted(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request)) {
	m.inFlight.Add(1)
	cw := &codeWriter{ResponseWriter: w}
	serve(cw, r)
	m.inFlight.Add(-1)
	code := cw.code
	if code == 0 {
		code = http.StatusOK // nothing written: net/http answers 200
	}
	if code >= maxCodes {
		code = 0
	}
	m.requests[routeOf(r.URL.Path)][code].Add(1)
}

// codeWriter keeps the status code a handler answers with.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Hijack hands the connection to a WebSocket upgrade, which answers 101.
func (w *codeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.code = http.StatusSwitchingProtocols
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
