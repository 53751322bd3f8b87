package config

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v3"

	"github.com/loadprobe/loadprobe/config/template"
	"github.com/loadprobe/loadprobe/internal/regularfile"
	"github.com/loadprobe/loadprobe/plan"
)

// Data is a probe's data file: each iteration takes one row, whose columns
// templates name as {{.column}} (docs/templates.md, "Data").
// The rows are read when the config loads (and again on every reload),
// never during a run; /config shows their count, never their values.
type Data struct {
	File  string `yaml:"file"`
	Order string `yaml:"order"` // sequential (the default) or random

	rows int // how many the file holds, for /config
}

// Orders of a probe's data rows.
const (
	OrderSequential = "sequential"
	OrderRandom     = "random"
)

// Bounds of a data file: its rows are held in memory, a field in 4 bytes
// beside its text (template.Table), so that a file of tiny rows within
// its size costs at most 128 MiB more than its text.
const (
	maxDataFileSize = 64 << 20
	maxDataFields   = 1 << 25 // rows × columns
)

// errTooManyFields is the error of a data file past maxDataFields.
func errTooManyFields(line, width int) error {
	return fmt.Errorf("line %d: more than %d fields (rows × columns: %d rows of %d columns): split the file, or use fewer rows",
		line, maxDataFields, maxDataFields/width, width)
}

// MarshalYAML shows d as /config does: the file, the order, and how many
// rows it holds in a comment (so that the YAML still loads as it is). A row
// may hold a password; none is ever shown.
func (d Data) MarshalYAML() (any, error) {
	var n yaml.Node
	err := n.Encode(struct {
		File  string `yaml:"file"`
		Order string `yaml:"order"`
	}{d.File, d.Order})
	n.LineComment = fmt.Sprintf("%d rows", d.rows)
	return &n, err
}

// data checks d and reads its rows, and returns them with the file's
// SHA-256; their columns are what the probe's templates may name.
func (v *validator) data(d *Data, p keyPath, dir string) (*plan.Rows, [sha256.Size]byte) {
	if d == nil {
		return nil, [sha256.Size]byte{}
	}
	switch d.Order {
	case "":
		d.Order = OrderSequential
	case OrderSequential, OrderRandom:
	default:
		v.errorf(p.to("order"), "%q is not an order: use sequential or random", d.Order)
	}
	fp := p.to("file")
	if d.File == "" {
		v.errorf(fp, "required")
		return nil, [sha256.Size]byte{}
	}
	d.File = commoncfg.JoinDir(dir, d.File)
	text, err := regularfile.Read(d.File, maxDataFileSize)
	if err != nil {
		v.errorf(fp, "%v", err)
		return nil, [sha256.Size]byte{}
	}
	key := keptData{d.File, sha256.Sum256(text)}
	rows, ok := v.rows[key]
	if !ok {
		rows = &plan.Rows{}
		// Spreadsheets and Windows editors start a UTF-8 file with a byte
		// order mark; it is no part of the first column's name.
		text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		switch ext := strings.ToLower(filepath.Ext(d.File)); ext {
		case ".csv":
			rows.Columns, rows.Table, err = readCSV(text)
		case ".jsonl", ".ndjson":
			rows.Columns, rows.Table, err = readJSONLines(text)
		default:
			err = fmt.Errorf("%q is neither CSV (.csv) nor JSON Lines (.jsonl, .ndjson)", ext)
		}
		if err == nil && rows.Table.Len() == 0 {
			err = errors.New("holds no rows")
		}
		if err != nil {
			v.errorf(fp, "%s: %v", d.File, err)
			return nil, [sha256.Size]byte{}
		}
		v.rows[key] = rows
	}
	d.rows = rows.Table.Len()
	return &plan.Rows{Columns: rows.Columns, Table: rows.Table, Random: d.Order == OrderRandom}, key.sum
}

// newTable returns the table of text's rows, of width columns, sized for
// as many rows as it has lines and for their text, which is the file's
// without at least a separator a field: it is filled without a copy.
func newTable(width int, text []byte) *template.Table {
	lines := bytes.Count(text, []byte("\n")) + 1
	rows := min(lines, maxDataFields/max(width, 1))
	return template.NewTable(width, rows, max(len(text)-lines*width, 0))
}

// readCSV reads a CSV file whose first row names the columns.
func readCSV(text []byte) ([]string, *template.Table, error) {
	r := csv.NewReader(bytes.NewReader(text))
	r.FieldsPerRecord = -1 // checked here, to say which row and how
	r.ReuseRecord = true   // the table copies each row's text
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, errors.New("empty: the first row names the columns")
	}
	if err != nil {
		return nil, nil, err
	}
	header = slices.Clone(header)
	if err := checkColumns(header, 1); err != nil {
		return nil, nil, err
	}
	rows := newTable(len(header), text)
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return header, rows, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if len(row) != len(header) {
			line, _ := r.FieldPos(0)
			return nil, nil, fmt.Errorf("line %d: the row has %d of the header's %d fields", line, len(row), len(header))
		}
		if rows.Fields()+len(row) > maxDataFields {
			line, _ := r.FieldPos(0)
			return nil, nil, errTooManyFields(line, len(header))
		}
		rows.Add(row)
	}
}

// readJSONLines reads one JSON object per line; the first object's keys
// are the columns, and every other line must have the same. A string is
// taken as it is, any other value as its JSON text.
func readJSONLines(text []byte) ([]string, *template.Table, error) {
	var columns []string
	var rows *template.Table
	var row []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, maxDataFileSize)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			return nil, nil, fmt.Errorf("line %d: not a JSON object: %v", line, err)
		}
		keys := slices.Sorted(maps.Keys(obj))
		if columns == nil {
			if err := checkColumns(keys, line); err != nil {
				return nil, nil, err
			}
			columns, rows, row = keys, newTable(len(keys), text), make([]string, len(keys))
		} else if !slices.Equal(keys, columns) {
			return nil, nil, fmt.Errorf("line %d: keys %s, the first line has %s", line, strings.Join(keys, ", "), strings.Join(columns, ", "))
		}
		if rows.Fields()+len(row) > maxDataFields {
			return nil, nil, errTooManyFields(line, len(columns))
		}
		for i, k := range columns {
			var s string
			if json.Unmarshal(obj[k], &s) == nil {
				row[i] = s
			} else {
				row[i] = string(obj[k])
			}
		}
		rows.Add(row)
	}
	return columns, rows, sc.Err()
}

// checkColumns checks the names of the columns: a template names them.
func checkColumns(names []string, line int) error {
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case !validName(n):
			return fmt.Errorf("line %d: column %q: a name is letters, digits, _ and -", line, n)
		case seen[n]:
			return fmt.Errorf("line %d: column %q appears twice", line, n)
		}
		seen[n] = true
	}
	return nil
}
