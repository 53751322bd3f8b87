package template

import (
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
)

// Rows hands out the rows of a probe's data, one per iteration, to every
// worker of a run: in file order, or in random order. Random order takes a
// fresh permutation of all the rows for each pass over them (a cycle), so
// that every row is used once per cycle, as in file order, and no two
// cycles run in the same order. The permutation is computed, not stored:
// a row is taken with one atomic add and no lock, whatever the level.
type Rows struct {
	rows   *Table
	random bool
	seed   uint64
	next   atomic.Uint64
}

// NewRows returns the picker of the rows of a table (at least one).
func NewRows(rows *Table, random bool) *Rows {
	return &Rows{rows: rows, random: random, seed: rand.Uint64()}
}

// Take returns the next row.
func (r *Rows) Take() Row {
	k := r.next.Add(1) - 1
	n := uint64(r.rows.Len())
	i := k % n
	if r.random {
		i = permute(i, n, mix(r.seed^k/n))
	}
	return r.rows.Row(int(i))
}

// permute maps i in [0, n) to its place in the permutation of [0, n) that
// key chooses: a four-round Feistel network over the smallest even power
// of two that holds n, walked again while it lands past n (cycle walking:
// each walk ends, since the network is a bijection, in under four rounds
// of it on average).
func permute(i, n, key uint64) uint64 {
	half := uint((bits.Len64(n-1) + 1) / 2)
	mask := uint64(1)<<half - 1
	for {
		l, r := i>>half, i&mask
		for round := range uint64(4) {
			l, r = r, l^mix(r^key^round<<56)&mask
		}
		if i = l<<half | r; i < n {
			return i
		}
	}
}

// mix is splitmix64's finalizer: a well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
