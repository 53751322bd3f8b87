package h2

import (
	"bytes"
	"errors"

	"golang.org/x/net/http2/hpack"
)

// The HPACK decoder of a connection (RFC 7541). hpack.Decoder hands every
// field over as strings, which costs an allocation per literal field: two
// or three per response of a server such as nginx. This one hands the
// fields over as bytes valid during the call and keeps the dynamic table
// in one byte arena, so decoding a response allocates nothing once the
// arena has grown; Huffman codes are decoded by hpack.

var (
	errCompression = errors.New("hpack: invalid header block")
	// errTruncated is a block that ends inside a field: invalid when it
	// is whole, a block still to be continued otherwise.
	errTruncated = errors.New("hpack: truncated header block")
)

// initialTableSize is the dynamic table size both ends start with
// (SETTINGS_HEADER_TABLE_SIZE, which the client leaves at its default).
const initialTableSize = 4096

type tableEntry struct{ off, nameLen, valueLen int }

type decoder struct {
	entries    []tableEntry // oldest first, from first
	first      int
	arena      []byte // the entries' names and values, from arenaStart
	arenaStart int
	size       int // RFC 7541 size: name, value and 32 per entry
	maxSize    int
	maxString  int // the longest string accepted
	// quiet stops the fields of the block being decoded from being handed
	// over, or their strings Huffman-decoded unless the table keeps them:
	// as hpack.Decoder's SetEmitEnabled(false), which x/net's Framer sets
	// at the first invalid field.
	quiet     bool
	name, val bytes.Buffer
	scratch   []byte
	// memo keeps the Huffman-coded strings of the last block decoded, by
	// their place in the block: a server that writes its fields as
	// literals in the same order (nginx: server, date, content-type,
	// content-length) sends the same codes in every response, and
	// decoding them again was a tenth of the client's CPU against nginx at
	// 10 streams a connection.
	memo     [memoSlots]memoEntry
	memoNext int // the place of the block's next Huffman-coded string
}

// memoSlots is how many of a block's Huffman-coded strings the memo
// keeps, and memoCoded the longest one it keeps.
const (
	memoSlots = 8
	memoCoded = 64
)

type memoEntry struct {
	set            bool
	coded, decoded []byte
}

func newDecoder(maxString int) *decoder {
	return &decoder{maxSize: initialTableSize, maxString: maxString}
}

// fieldFunc receives one decoded field; name and value are valid only
// during the call.
type fieldFunc func(name, value []byte) error

// decode decodes one complete header block; an error of emit ends it
// (the block's remaining fields are still decoded into the table, as a
// peer's next block depends on them) and is returned.
func (d *decoder) decode(block []byte, emit fieldFunc) error {
	var emitErr error
	d.quiet, d.memoNext = false, 0
	call := func(name, value []byte) {
		if emitErr == nil && !d.quiet {
			emitErr = emit(name, value)
		}
	}
	for first := true; len(block) > 0; first = false {
		b := block[0]
		var err error
		switch {
		case b&0x80 != 0: // indexed
			var i uint64
			if i, block, err = readInt(7, block); err != nil {
				return err
			}
			name, value, ok := d.at(i)
			if !ok {
				return errCompression
			}
			call(name, value)
		case b&0xc0 == 0x40: // literal, added to the table
			if block, err = d.literal(6, true, block, call); err != nil {
				return err
			}
		case b&0xe0 == 0x20: // dynamic table size update
			if !first && d.size > 0 {
				return errCompression
			}
			var n uint64
			if n, block, err = readInt(5, block); err != nil {
				return err
			}
			if n > initialTableSize {
				return errCompression
			}
			d.maxSize = int(n)
			d.evict(0)
		default: // literal without indexing, or never indexed
			if block, err = d.literal(4, false, block, call); err != nil {
				return err
			}
		}
	}
	return emitErr
}

func (d *decoder) literal(prefix byte, index bool, block []byte, call func(name, value []byte)) ([]byte, error) {
	i, block, err := readInt(prefix, block)
	if err != nil {
		return nil, err
	}
	var name []byte
	var rawName, rawValue rawString
	if i > 0 {
		var ok bool
		if name, _, ok = d.at(i); !ok {
			return nil, errCompression
		}
	} else if rawName, block, err = d.readString(block); err != nil {
		return nil, err
	}
	// Both strings are read before either is decoded, as hpack.Decoder
	// does: a block cut inside the field is truncated, not invalid.
	if rawValue, block, err = d.readString(block); err != nil {
		return nil, err
	}
	want := index || !d.quiet
	if i == 0 {
		if name, err = d.decodeString(&d.name, rawName, want); err != nil {
			return nil, err
		}
	}
	value, err := d.decodeString(&d.val, rawValue, want)
	if err != nil {
		return nil, err
	}
	call(name, value)
	if index {
		d.add(name, value)
	}
	return block, nil
}

// at returns the entry at HPACK index i: the static table, then the
// dynamic one, newest first.
func (d *decoder) at(i uint64) (name, value []byte, ok bool) {
	switch {
	case i == 0:
		return nil, nil, false
	case i <= uint64(len(staticTable)):
		e := &staticFields[i-1]
		return e.name, e.value, true
	}
	j := i - uint64(len(staticTable)) - 1
	if j >= uint64(len(d.entries)-d.first) {
		return nil, nil, false
	}
	e := d.entries[len(d.entries)-1-int(j)]
	return d.arena[e.off : e.off+e.nameLen], d.arena[e.off+e.nameLen : e.off+e.nameLen+e.valueLen], true
}

// add puts a field into the dynamic table, evicting the oldest entries to
// make room; a field larger than the table empties it (RFC 7541, 4.4).
func (d *decoder) add(name, value []byte) {
	// name may point into the arena, which eviction and compaction move.
	d.scratch = append(append(d.scratch[:0], name...), value...)
	size := len(name) + len(value) + 32
	d.evict(size)
	if size > d.maxSize {
		return
	}
	if len(d.arena)+len(d.scratch) > cap(d.arena) && d.arenaStart > 0 {
		live := copy(d.arena, d.arena[d.arenaStart:])
		for k := d.first; k < len(d.entries); k++ {
			d.entries[k].off -= d.arenaStart
		}
		d.arena, d.arenaStart = d.arena[:live], 0
	}
	if d.first > 0 && d.first >= len(d.entries)/2 {
		n := copy(d.entries, d.entries[d.first:])
		d.entries, d.first = d.entries[:n], 0
	}
	d.entries = append(d.entries, tableEntry{off: len(d.arena), nameLen: len(name), valueLen: len(value)})
	d.arena = append(d.arena, d.scratch...)
	d.size += size
}

// evict drops the oldest entries until room more bytes fit.
func (d *decoder) evict(room int) {
	for d.size+room > d.maxSize && d.first < len(d.entries) {
		e := d.entries[d.first]
		d.size -= e.nameLen + e.valueLen + 32
		d.first++
		d.arenaStart = e.off + e.nameLen + e.valueLen
	}
	if d.first == len(d.entries) {
		d.entries, d.first = d.entries[:0], 0
		d.arena, d.arenaStart = d.arena[:0], 0
	}
}

// rawString is a string literal as the block holds it.
type rawString struct {
	b       []byte
	huffman bool
}

// readString reads a string literal, not decoded yet.
func (d *decoder) readString(block []byte) (rawString, []byte, error) {
	if len(block) == 0 {
		return rawString{}, nil, errTruncated
	}
	huffman := block[0]&0x80 != 0
	n, block, err := readInt(7, block)
	if err != nil {
		return rawString{}, nil, err
	}
	switch {
	case n > uint64(d.maxString):
		return rawString{}, nil, errCompression
	case n > uint64(len(block)):
		return rawString{}, nil, errTruncated
	}
	return rawString{b: block[:n], huffman: huffman}, block[n:], nil
}

// decodeString returns s, Huffman-decoded into buf if coded and wanted.
func (d *decoder) decodeString(buf *bytes.Buffer, s rawString, want bool) ([]byte, error) {
	if !s.huffman || !want {
		return s.b, nil
	}
	var m *memoEntry
	if d.memoNext < memoSlots {
		m = &d.memo[d.memoNext]
	}
	d.memoNext++
	if m != nil && m.set && bytes.Equal(m.coded, s.b) {
		return m.decoded, nil
	}
	buf.Reset()
	if _, err := hpack.HuffmanDecode(buf, s.b); err != nil || buf.Len() > d.maxString {
		return nil, errCompression
	}
	if m != nil && len(s.b) <= memoCoded {
		m.set, m.coded, m.decoded = true, append(m.coded[:0], s.b...), append(m.decoded[:0], buf.Bytes()...)
	}
	return buf.Bytes(), nil
}

// readInt reads an HPACK integer with an n-bit prefix (RFC 7541, 5.1).
func readInt(n byte, p []byte) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errTruncated
	}
	mask := uint64(1)<<n - 1
	i := uint64(p[0]) & mask
	p = p[1:]
	if i < mask {
		return i, p, nil
	}
	for m := uint(0); len(p) > 0; m += 7 {
		if m >= 63 {
			return 0, nil, errCompression
		}
		b := p[0]
		p = p[1:]
		i += uint64(b&0x7f) << m
		if b&0x80 == 0 {
			return i, p, nil
		}
	}
	return 0, nil, errTruncated
}

// appendInt appends an HPACK integer with an n-bit prefix, its first byte
// carrying the bits of flags above the prefix.
func appendInt(dst []byte, n byte, flags byte, i uint64) []byte {
	mask := uint64(1)<<n - 1
	if i < mask {
		return append(dst, flags|byte(i))
	}
	dst = append(dst, flags|byte(mask))
	for i -= mask; i >= 0x80; i >>= 7 {
		dst = append(dst, byte(i)|0x80)
	}
	return append(dst, byte(i))
}

// shrink lets go of the string buffers a block grew past keptBuffer; the
// table's arena is bounded by the table's size.
func (d *decoder) shrink() {
	if d.name.Cap() > keptBuffer {
		d.name = bytes.Buffer{}
	}
	if d.val.Cap() > keptBuffer {
		d.val = bytes.Buffer{}
	}
	if cap(d.scratch) > keptBuffer {
		d.scratch = nil
	}
}
