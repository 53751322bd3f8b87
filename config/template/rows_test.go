package template

import (
	"strconv"
	"testing"
)

func numberedRows(n int) *Table {
	rows := NewTable(1, n, 0)
	for i := range n {
		rows.Add([]string{strconv.Itoa(i)})
	}
	return rows
}

// Sequential order cycles the rows in file order.
func TestRowsSequential(t *testing.T) {
	r := NewRows(numberedRows(1000), false)
	for k := range 2500 {
		if got, want := r.Take().Field(0), strconv.Itoa(k%1000); got != want {
			t.Fatalf("take %d: row %s, want %s", k, got, want)
		}
	}
}

// Random order uses every row once per cycle, in another order each cycle.
func TestRowsRandomUsesEveryRow(t *testing.T) {
	for _, n := range []int{1, 2, 3, 1000, 1025} {
		r := NewRows(numberedRows(n), true)
		var orders [2][]string
		for cycle := range 2 {
			seen := map[string]bool{}
			for range n {
				row := r.Take().Field(0)
				if seen[row] {
					t.Fatalf("n=%d cycle %d: row %s taken twice", n, cycle, row)
				}
				seen[row] = true
				orders[cycle] = append(orders[cycle], row)
			}
		}
		if n == 1000 {
			same, inPlace := 0, 0
			for i := range n {
				if orders[0][i] == orders[1][i] {
					same++
				}
				if orders[0][i] == strconv.Itoa(i) {
					inPlace++
				}
			}
			// A random permutation keeps about one element in place.
			if same > 20 || inPlace > 20 {
				t.Errorf("cycles share %d places, the first keeps %d rows in file order: not shuffled", same, inPlace)
			}
		}
	}
}

func TestRowsTakeAllocatesNothing(t *testing.T) {
	r := NewRows(numberedRows(1000), true)
	if n := testing.AllocsPerRun(1000, func() { r.Take() }); n != 0 {
		t.Errorf("Take allocates %v times, want 0", n)
	}
}
