package template

import (
	"math/rand/v2"
	"strconv"
)

// Vars are the values of one attempt: its index, its random source, the
// data row of its iteration and the values captured so far. A Vars belongs
// to one worker; nothing in it is shared.
type Vars struct {
	Index    uint64
	Rand     *rand.Rand
	Row      Row      // the iteration's data row
	Captured []string // by the order of Scope.Captured
}

// NewVars returns Vars with a random source of their own, seeded from the
// runtime's secure source: workers do not draw the same sequence.
func NewVars(captured int) *Vars {
	return &Vars{Rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), Captured: make([]string, captured)}
}

// alphabet of {{random_string}}: letters and digits, safe in a URL, a
// header and a JSON string alike.
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Append appends what t writes with v to dst. It allocates only when dst
// has to grow.
func (t *Template) Append(dst []byte, v *Vars) []byte {
	for i := range t.segs {
		s := &t.segs[i]
		switch s.kind {
		case literal:
			dst = append(dst, s.text...)
		case index:
			dst = strconv.AppendUint(dst, v.Index, 10)
		case randomInt:
			dst = strconv.AppendInt(dst, RandomInt(v.Rand, s.a, s.b), 10)
		case randomString:
			dst = AppendRandomString(dst, v.Rand, s.a)
		case uuid:
			dst = AppendUUID(dst, v.Rand)
		case column:
			dst = appendValue(dst, v.Row.Field(s.slot), s.ctx)
		case captured:
			dst = appendValue(dst, v.Captured[s.slot], s.ctx)
		}
	}
	return dst
}

// RandomInt is {{random_int a b}}: uniform from a to b, both included.
func RandomInt(r *rand.Rand, a, b int64) int64 { return a + int64(r.Uint64N(uint64(b-a)+1)) }

// AppendRandomString appends {{random_string n}}: n letters and digits.
func AppendRandomString(dst []byte, r *rand.Rand, n int64) []byte {
	for range n {
		dst = append(dst, alphabet[r.IntN(len(alphabet))])
	}
	return dst
}

// AppendUUID appends a random (version 4) UUID.
func AppendUUID(dst []byte, r *rand.Rand) []byte {
	const hex = "0123456789abcdef"
	hi, lo := r.Uint64(), r.Uint64()
	hi = hi&^0xf000 | 0x4000     // version 4
	lo = lo&^(0xc<<60) | 0x8<<60 // variant 10
	for i := 0; i < 32; i++ {
		if i == 8 || i == 12 || i == 16 || i == 20 {
			dst = append(dst, '-')
		}
		w := hi
		if i >= 16 {
			w = lo
		}
		dst = append(dst, hex[w>>(60-4*(i%16))&0xf])
	}
	return dst
}

// appendValue appends a data or captured value as ctx allows.
func appendValue(dst []byte, s string, ctx Context) []byte {
	switch ctx {
	case URL:
		const hex = "0123456789ABCDEF"
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c <= ' ' || c >= 0x7f || c == '#' {
				dst = append(dst, '%', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
		return dst
	case Header:
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= ' ' && c != 0x7f || c == '\t' {
				dst = append(dst, c)
			}
		}
		return dst
	}
	return append(dst, s...)
}

// Most bytes a slot of each kind writes, but for values, whose size is
// their own: a 64-bit number, a UUID.
const (
	maxNumber = 20
	uuidSize  = 36
)

// Size returns the most bytes t can write with v's values: exact for
// literal text and values (a URL value percent-encoded at worst: three
// bytes a byte), the most a function can write for the others. With v nil
// values count for nothing: what is known when the config loads.
func (t *Template) Size(v *Vars) int64 {
	var n int64
	for i := range t.segs {
		s := &t.segs[i]
		switch s.kind {
		case literal:
			n += int64(len(s.text))
		case index, randomInt:
			n += maxNumber
		case randomString:
			n += s.a
		case uuid:
			n += uuidSize
		case column, captured:
			if v == nil {
				continue
			}
			var size int64
			if s.kind == column {
				size = int64(len(v.Row.Field(s.slot)))
			} else {
				size = int64(len(v.Captured[s.slot]))
			}
			if s.ctx == URL {
				size *= 3
			}
			n += size
		}
	}
	return n
}
