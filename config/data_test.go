package config

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const dataProbe = `allowed_targets: ["127.0.0.1"]
probes:
  - name: p
    data: {file: rows.csv}
    request: {url: "http://127.0.0.1:8080/u/{{.a}}"}
    load: {concurrency: [1]}
`

// A data file of more fields than the bound, within its size (empty
// fields cost a byte each), is an error naming the bound and the line.
func TestDataFieldsBounded(t *testing.T) {
	dir := t.TempDir()
	rows := func(n int) string {
		return "a,b\n" + strings.Repeat(",\n", n)
	}
	yml := filepath.Join(dir, "loadprobe.yml")
	for _, tc := range []struct {
		rows    int
		wantErr string
	}{
		{maxDataFields / 2, ""},
		{maxDataFields/2 + 1, "rows.csv: line 16777218: more than 33554432 fields (rows × columns: 16777216 rows of 2 columns)"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "rows.csv"), []byte(rows(tc.rows)), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Parse(yml, []byte(dataProbe))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%d rows of 2 fields: %v", tc.rows, err)
		case tc.wantErr == "" && c.Plans()[0].Rows.Table.Len() != tc.rows:
			t.Errorf("%d rows of 2 fields: %d rows loaded", tc.rows, c.Plans()[0].Rows.Table.Len())
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%d rows of 2 fields: error %v, want one containing %q", tc.rows, err, tc.wantErr)
		}
	}
}

// A reload whose data file is unchanged takes its rows from the running
// config (not parsed, not held twice), and its probe is the same; a
// changed file is parsed again and makes the probe another.
func TestReloadKeepsUnchangedData(t *testing.T) {
	dir := t.TempDir()
	data, yml := filepath.Join(dir, "rows.csv"), filepath.Join(dir, "loadprobe.yml")
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(yml, dataProbe)
	write(data, "a\nann\nbob\n")
	sc := NewSafeConfig(nil)
	if err := sc.ReloadConfig(yml, nil); err != nil {
		t.Fatal(err)
	}
	first := sc.Get().Plans()[0]
	if err := sc.ReloadConfig(yml, nil); err != nil {
		t.Fatal(err)
	}
	same := sc.Get().Plans()[0]
	if same.Rows.Table != first.Rows.Table || !same.Same(first) {
		t.Errorf("an unchanged data file: rows shared %v, probe the same %v; want both", same.Rows.Table == first.Rows.Table, same.Same(first))
	}
	write(data, "a\nann\ncid\n")
	if err := sc.ReloadConfig(yml, nil); err != nil {
		t.Fatal(err)
	}
	changed := sc.Get().Plans()[0]
	if changed.Same(first) || changed.Rows.Table.Row(1).Field(0) != "cid" {
		t.Errorf("a changed data file: probe the same %v, row 2 %q; want another probe with the new rows", changed.Same(first), changed.Rows.Table.Row(1).Field(0))
	}
	write(data, "a\nann\nbob\n")
	write(yml, strings.Replace(dataProbe, "concurrency: [1]", "concurrency: [1], step_duration: 10s", 1))
	if err := sc.ReloadConfig(yml, nil); err != nil {
		t.Fatal(err)
	}
	if other := sc.Get().Plans()[0]; other.Same(first) {
		t.Error("a probe with another step_duration is the same")
	}
}

// A million one-character rows cost a few bytes each, not a string and a
// slice header (40 bytes) each.
func TestDataRowsHeldCompactly(t *testing.T) {
	const rows = 1 << 20
	text := append([]byte("a\n"), bytes.Repeat([]byte("x\n"), rows)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, table, err := readCSV(text)
	runtime.ReadMemStats(&after)
	if err != nil || table.Len() != rows {
		t.Fatalf("readCSV: %v, %d rows", err, table.Len())
	}
	if perRow := float64(after.TotalAlloc-before.TotalAlloc) / rows; perRow > 8 {
		t.Errorf("reading %d one-character rows allocated %.1f bytes a row, want at most 8", rows, perRow)
	}
}
