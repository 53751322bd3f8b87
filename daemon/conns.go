package daemon

import (
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// The daemon's own HTTP server is bounded so that idle or slow clients
// cannot starve a scrape (docs/commands.md, "Endpoints"): each phase of a
// connection has a deadline, and the open connections are bounded below
// the process's file descriptors, which its probes need.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second // the whole request: none of ours has a large body
	// writeTimeout spans the handler and the writing of its answer: a
	// scrape slower than this has failed its scrape timeout anyway.
	writeTimeout = 60 * time.Second
	idleTimeout  = 2 * time.Minute
	// maxConnections bounds the open connections of each listener; at the
	// bound, the idle ones are closed to make room (connLimit).
	maxConnections = 128
)

// newServer returns the daemon's HTTP server for h, with the deadlines
// above and cl's hook; its listeners are to be bounded by cl.listener.
func newServer(h http.Handler, cl *connLimit, errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ConnState:         cl.track,
		ErrorLog:          errorLog,
	}
}

// connLimit closes idle keep-alive connections once a listener holds
// maxConnections: without it, a client holding that many idle connections
// would keep every new one (the next scrape) waiting in the listener's
// queue until an idle timeout. A connection busy with a request is left
// alone; its deadlines end it.
type connLimit struct {
	mu   sync.Mutex
	open int
	idle map[net.Conn]struct{}
}

func newConnLimit() *connLimit { return &connLimit{idle: map[net.Conn]struct{}{}} }

// listener bounds l to maxConnections open connections: beyond them, the
// next one waits to be accepted until one closes.
func (cl *connLimit) listener(l net.Listener) net.Listener {
	return netutil.LimitListener(l, maxConnections)
}

// track is the server's ConnState hook.
func (cl *connLimit) track(c net.Conn, state http.ConnState) {
	var closing []net.Conn
	cl.mu.Lock()
	switch state {
	case http.StateNew:
		cl.open++
	case http.StateActive:
		delete(cl.idle, c)
	case http.StateIdle:
		cl.idle[c] = struct{}{}
	case http.StateHijacked, http.StateClosed:
		cl.open--
		delete(cl.idle, c)
	}
	if cl.open >= maxConnections {
		for ic := range cl.idle {
			closing = append(closing, ic)
			delete(cl.idle, ic)
		}
	}
	cl.mu.Unlock()
	for _, ic := range closing {
		ic.Close()
	}
}
