package h2

import (
	"net"
	"sync"
	"time"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// Pool shares HTTP/2 connections among the members of a transport (the
// Conns of its users), each with a stream of its own: the lean HTTP
// client's, when a server picks h2 over TLS, and gRPC's calls. One rule
// sizes both (docs/configuration.md, "Which client sends the requests"):
// member i shares the connection of group ⌊i/streams⌋, modulo most when
// most bounds the groups. An https probe's http2.streams_per_connection is
// streams, with no bound: a level of N workers holds ⌈N/streams⌉
// connections; a gRPC probe's grpc.connections is most, with streams 1:
// its calls share that many connections, round robin.
type Pool struct {
	streams, most int

	mu     sync.Mutex
	groups []*Group
	joined int
}

// NewPool returns a pool of groups of streams members, at most most
// groups (0: no bound).
func NewPool(streams, most int) *Pool {
	return &Pool{streams: max(streams, 1), most: most}
}

// Group is the connection some members of a pool share.
type Group struct {
	mu      sync.Mutex
	conn    *Conn // nil until dialled, or once it can take no stream
	members int   // members that have not left
}

// Join gives a new member its group.
func (p *Pool) Join() *Group {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.joined / p.streams
	if p.most > 0 {
		i %= p.most
	}
	p.joined++
	for len(p.groups) <= i {
		p.groups = append(p.groups, &Group{})
	}
	g := p.groups[i]
	g.mu.Lock()
	g.members++
	g.mu.Unlock()
	return g
}

// Conns is how many connections a level of n members holds at most.
func (p *Pool) Conns(n int) int {
	groups := (n + p.streams - 1) / p.streams
	if p.most > 0 {
		groups = min(groups, p.most)
	}
	return groups
}

// Close closes every group's connection; a member that uses its group
// afterwards dials again.
func (p *Pool) Close() {
	p.mu.Lock()
	groups := p.groups
	p.mu.Unlock()
	for _, g := range groups {
		g.close()
	}
}

// Get returns the group's connection, or dials one with dial when the
// group has none that takes a stream. dial may return no connection and
// no error (the server chose HTTP/1.1 for the connection it opened, which
// the member keeps), and so does Get then.
func (g *Group) Get(dial func() (*Conn, error)) (*Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn != nil && g.conn.Usable() {
		return g.conn, nil
	}
	g.conn = nil // a connection going away ends by itself: its streams finish first
	conn, err := dial()
	if err != nil || conn == nil {
		return nil, err
	}
	g.conn = conn
	return conn, nil
}

// Drop forgets conn, if it is still the group's.
func (g *Group) Drop(conn *Conn) {
	g.mu.Lock()
	if g.conn == conn {
		g.conn = nil
	}
	g.mu.Unlock()
}

// Leave is a member's Close: the last one closes the connection.
func (g *Group) Leave() {
	g.mu.Lock()
	g.members--
	last := g.members == 0
	g.mu.Unlock()
	if last {
		g.close()
	}
}

func (g *Group) close() {
	g.mu.Lock()
	conn := g.conn
	g.conn = nil
	g.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// Start runs the client side of HTTP/2 over nc (raw the TCP connection
// under it, which conns tracks), and lets conns forget raw once the
// connection has ended.
func Start(nc, raw net.Conn, conns *wire.ConnSet[net.Conn], opts Options, deadline time.Time) (*Conn, error) {
	conn, err := New(nc, opts, deadline)
	if err != nil {
		conns.Remove(raw)
		return nil, err
	}
	go func() {
		<-conn.Done()
		conns.Remove(raw)
	}()
	return conn, nil
}
