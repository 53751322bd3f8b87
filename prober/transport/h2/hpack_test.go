package h2

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// TestDecoderAgainstHpack decodes a run of blocks as one connection's
// responses, whose Huffman-coded literals repeat, change and move from
// one block to the next, and reads each block's fields as x/net's
// decoder reads them.
func TestDecoderAgainstHpack(t *testing.T) {
	long := strings.Repeat("a long value ", 10) // longer than the memo keeps
	blocks := [][][2]string{
		{{":status", "200"}, {"server", "nginx"}, {"date", "Mon, 07 Dec 2026 01:00:00 GMT"}, {"content-length", "2"}},
		{{":status", "200"}, {"server", "nginx"}, {"date", "Mon, 07 Dec 2026 01:00:00 GMT"}, {"content-length", "2"}},
		{{":status", "200"}, {"server", "nginx"}, {"date", "Mon, 07 Dec 2026 01:00:01 GMT"}, {"content-length", "20"}},
		{{":status", "404"}, {"date", "Mon, 07 Dec 2026 01:00:01 GMT"}, {"server", "nginx"}, {"x-custom", "nginx"}},
		{{":status", "200"}, {"x-long", long}, {"server", "envoy"}},
		{{":status", "200"}, {"x-long", long + "!"}, {"server", "envoy"}, {"x-custom", ""}},
		{{":status", "200"}, {"server", "nginx"}, {"date", "Mon, 07 Dec 2026 01:00:01 GMT"}, {"content-length", "2"}},
	}
	d := newDecoder(1 << 20)
	ref := hpack.NewDecoder(initialTableSize, nil)
	for i, fields := range blocks {
		block := huffmanLiterals(fields, i%2 == 1)
		var got []string
		if err := d.decode(block, func(name, value []byte) error {
			got = append(got, string(name)+": "+string(value))
			return nil
		}); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		want, err := ref.DecodeFull(block)
		if err != nil {
			t.Fatalf("block %d: x/net: %v", i, err)
		}
		var wantText []string
		for _, f := range want {
			wantText = append(wantText, f.Name+": "+f.Value)
		}
		if !slices.Equal(got, wantText) {
			t.Errorf("block %d: got %q, x/net reads %q", i, got, wantText)
		}
	}
}

// huffmanLiterals writes fields as literals with Huffman-coded strings,
// added to the dynamic table when indexed.
func huffmanLiterals(fields [][2]string, indexed bool) []byte {
	var b []byte
	for _, f := range fields {
		if f[0] == ":status" {
			b = append(b, 0x08) // literal without indexing, :status's index
		} else if indexed {
			b = append(b, 0x40)
			b = appendHuffman(b, f[0])
		} else {
			b = append(b, 0x00)
			b = appendHuffman(b, f[0])
		}
		b = appendHuffman(b, f[1])
	}
	return b
}

func appendHuffman(b []byte, s string) []byte {
	coded := hpack.AppendHuffmanString(nil, s)
	b = appendInt(b, 7, 0x80, uint64(len(coded)))
	return append(b, coded...)
}
