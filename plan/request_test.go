package plan

import "testing"

// A request's successes are any 2xx, or the codes it names.
func TestValidCode(t *testing.T) {
	var r Request
	r.SetValidCodes(nil)
	for code, want := range map[int]bool{100: false, 199: false, 200: true, 299: true, 300: false, 500: false, -1: false, 1000: false} {
		if got := r.ValidCode(code); got != want {
			t.Errorf("no codes named: ValidCode(%d) = %t, want %t", code, got, want)
		}
	}
	r.SetValidCodes([]int{200, 404})
	for code, want := range map[int]bool{200: true, 204: false, 404: true} {
		if got := r.ValidCode(code); got != want {
			t.Errorf("codes [200 404]: ValidCode(%d) = %t, want %t", code, got, want)
		}
	}
}
