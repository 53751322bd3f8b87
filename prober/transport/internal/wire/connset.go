package wire

import "sync"

// ConnSet tracks the open connections of a client's Conns, so that
// the client's Close can release them.
type ConnSet[T comparable] struct {
	mu  sync.Mutex
	set map[T]struct{}
}

func (s *ConnSet[T]) Add(c T) {
	s.mu.Lock()
	if s.set == nil {
		s.set = make(map[T]struct{})
	}
	s.set[c] = struct{}{}
	s.mu.Unlock()
}

func (s *ConnSet[T]) Remove(c T) {
	s.mu.Lock()
	delete(s.set, c)
	s.mu.Unlock()
}

// drain empties the set and returns what it held.
func (s *ConnSet[T]) Drain() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]T, 0, len(s.set))
	for c := range s.set {
		out = append(out, c)
	}
	clear(s.set)
	return out
}
