package template

import "strings"

// Table holds the rows of a probe's data compactly: the text of every
// field in one string, and where each field ends. A field costs 4 bytes
// beside its text, where a [][]string costs a string header (16 bytes) a
// field and a slice header (24 bytes) and an allocation a row: a data file
// of 33 million one-character rows is 170 MB, not gigabytes.
type Table struct {
	width int
	text  strings.Builder
	ends  []uint32 // the end of each field in text, row after row
}

// NewTable returns an empty table of width columns; rows and bytes are
// how many rows and how much text it is expected to hold (0 when
// unknown), so that it does not grow by copies.
func NewTable(width, rows, bytes int) *Table {
	t := &Table{width: width, ends: make([]uint32, 0, width*rows)}
	t.text.Grow(bytes)
	return t
}

// Add appends a row of the table's width; its fields are copied.
func (t *Table) Add(fields []string) {
	for _, f := range fields {
		t.text.WriteString(f)
		t.ends = append(t.ends, uint32(t.text.Len()))
	}
}

// Len is the number of rows.
func (t *Table) Len() int {
	if t == nil || t.width == 0 {
		return 0
	}
	return len(t.ends) / t.width
}

// Fields is the number of fields: rows × columns.
func (t *Table) Fields() int { return len(t.ends) }

// Row returns row i, in [0, Len()).
func (t *Table) Row(i int) Row { return Row{t: t, first: i * t.width} }

// Row is one row of a Table, by value: taking it allocates nothing.
type Row struct {
	t     *Table
	first int // the index of its first field in t.ends
}

// Field returns the row's value in column c.
func (r Row) Field(c int) string {
	k := r.first + c
	start := uint32(0)
	if k > 0 {
		start = r.t.ends[k-1]
	}
	return r.t.text.String()[start:r.t.ends[k]]
}

// Fields returns the row's values, for a reader (tests, error messages).
func (r Row) Fields() []string {
	fields := make([]string, r.t.width)
	for c := range fields {
		fields[c] = r.Field(c)
	}
	return fields
}
