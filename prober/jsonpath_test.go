package prober

import "testing"

// jsonPath walks the body's text to the value the path names, as decoding
// the whole body would find it.
func TestJSONPath(t *testing.T) {
	const doc = ` { "token" : "abc", "n": 1.50, "t": true, "null": null,
		"items": [ {"id": 7, "skip": {"deep": [1, [2, "]}"], {"x": "\"}"}]}}, {"id": 8, "tags": ["a" , "b"]} ],
		"we\u0069rd": "escaped key", "quote\"d": "q", "dup": 1, "dup": 2, "empty": {}, "s\\": "back" } `
	for _, tc := range []struct {
		path, want string
		ok         bool
	}{
		{"token", "abc", true},
		{"n", "1.50", true},
		{"t", "true", true},
		{"null", "", false},
		{"items.1.id", "8", true},
		{"items.1.tags.1", "b", true},
		{"items.0.skip", `{"deep":[1,[2,"]}"],{"x":"\"}"}]}`, true},
		{"items.1", `{"id":8,"tags":["a","b"]}`, true},
		{"items.2", "", false},
		{"items.-1", "", false},
		{"items.x", "", false},
		{"token.x", "", false},
		{"weird", "escaped key", true},
		{`quote"d`, "q", true},
		{`s\`, "back", true},
		{"dup", "2", true},
		{"empty", "{}", true},
		{"empty.x", "", false},
		{"missing", "", false},
	} {
		got, ok := jsonPath([]byte(doc), tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
	for _, bad := range []string{"", "{", `{"token": "abc"`, `{"token": "abc"} x`, `{"token": 01}`} {
		if got, ok := jsonPath([]byte(bad), "token"); ok {
			t.Errorf("%q: %q, want nothing from a body that is not JSON", bad, got)
		}
	}
}
