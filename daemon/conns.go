package daemon

import (
	"context"
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
	// bound, a new one makes room (connLimit).
	maxConnections = 128
)

// newServer returns the daemon's HTTP server for h, with the deadlines
// above and cl's hook; its listeners are to be bounded by cl.listener.
func newServer(h http.Handler, cl *connLimit, errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           cl.handler(h),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ConnState:         cl.track,
		ConnContext:       cl.connContext,
		ErrorLog:          errorLog,
	}
}

// connLimit makes room for a new connection once a listener holds
// maxConnections: it closes the idle keep-alive connections, or else the
// one that has waited longest for its request to arrive whole (a client
// sending its header a byte at a time). Without it, clients holding that
// many connections, idle or slow, would keep every new one (the next
// scrape) waiting in the listener's queue until their deadlines. A
// connection whose request is being answered is left alone.
type connLimit struct {
	mu   sync.Mutex
	open int
	idle map[net.Conn]struct{}
	// reading holds the connections whose next request has not been read
	// whole yet, since when they wait for it.
	reading map[net.Conn]time.Time
}

func newConnLimit() *connLimit {
	return &connLimit{idle: map[net.Conn]struct{}{}, reading: map[net.Conn]time.Time{}}
}

// listener bounds l to maxConnections open connections: beyond them, the
// next one waits to be accepted until one closes.
func (cl *connLimit) listener(l net.Listener) net.Listener {
	return netutil.LimitListener(l, maxConnections)
}

// connKey is the context key of the connection a request came on.
type connKey struct{}

// connContext is the server's ConnContext: it gives each request its
// connection, for handler.
func (cl *connLimit) connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// handler marks a connection's request as read whole while h answers it.
func (cl *connLimit) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			cl.mu.Lock()
			delete(cl.reading, c)
			cl.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// track is the server's ConnState hook.
func (cl *connLimit) track(c net.Conn, state http.ConnState) {
	var closing []net.Conn
	cl.mu.Lock()
	switch state {
	case http.StateNew:
		cl.open++
		cl.reading[c] = time.Now()
	case http.StateActive:
		if _, was := cl.idle[c]; was {
			delete(cl.idle, c)
			cl.reading[c] = time.Now()
		}
	case http.StateIdle:
		cl.idle[c] = struct{}{}
	case http.StateHijacked, http.StateClosed:
		cl.open--
		delete(cl.idle, c)
		delete(cl.reading, c)
	}
	if cl.open >= maxConnections {
		for ic := range cl.idle {
			closing = append(closing, ic)
			delete(cl.idle, ic)
		}
		if len(closing) == 0 && state == http.StateNew {
			if slowest := cl.slowest(c); slowest != nil {
				closing = append(closing, slowest)
				delete(cl.reading, slowest)
			}
		}
	}
	cl.mu.Unlock()
	for _, ic := range closing {
		ic.Close()
	}
}

// slowest is the connection but c that has waited longest for its
// request; nil when there is none. cl.mu is held.
func (cl *connLimit) slowest(c net.Conn) net.Conn {
	var found net.Conn
	var since time.Time
	for rc, t := range cl.reading {
		if rc != c && (found == nil || t.Before(since)) {
			found, since = rc, t
		}
	}
	return found
}
