package prober

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// jsonPath finds a dotted path (items.0.id) in the JSON document body. It
// checks the body once (json.Valid) and then walks its text: the members
// and elements the path passes over are skipped, never decoded, so a
// capture from a large body costs nothing beyond the body itself (decoded
// into a tree of `any`, a body costs some twenty times its text). It
// returns a string as it is and any other value as its JSON text,
// compacted; false when the body is not JSON or the path leads nowhere or
// to null. Of duplicate keys the last counts, as when decoding.
func jsonPath(body []byte, path string) (string, bool) {
	if !json.Valid(body) {
		return "", false
	}
	w := jsonWalker{b: body}
	for _, key := range strings.Split(path, ".") {
		w.space()
		switch w.b[w.i] {
		case '{':
			if !w.member(key) {
				return "", false
			}
		case '[':
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || !w.element(i) {
				return "", false
			}
		default:
			return "", false
		}
	}
	w.space()
	start := w.i
	w.skip()
	raw := body[start:w.i]
	switch raw[0] {
	case 'n':
		return "", false
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err == nil
	}
	var text bytes.Buffer
	if json.Compact(&text, raw) != nil {
		return "", false
	}
	return text.String(), true
}

// jsonWalker reads valid JSON text from b[i:].
type jsonWalker struct {
	b []byte
	i int
}

func (w *jsonWalker) space() {
	for w.i < len(w.b) && strings.IndexByte(" \t\r\n", w.b[w.i]) >= 0 {
		w.i++
	}
}

// str moves past the string at i.
func (w *jsonWalker) str() {
	for w.i++; w.b[w.i] != '"'; w.i++ {
		if w.b[w.i] == '\\' {
			w.i++
		}
	}
	w.i++
}

// skip moves past the value at i, however deep.
func (w *jsonWalker) skip() {
	for depth := 0; ; {
		w.space()
		switch w.b[w.i] {
		case '"':
			w.str()
		case '{', '[':
			depth++
			w.i++
		case '}', ']':
			depth--
			w.i++
		case ',', ':':
			w.i++
		default: // a number, true, false or null
			for w.i < len(w.b) && strings.IndexByte(" \t\r\n,:]}", w.b[w.i]) < 0 {
				w.i++
			}
		}
		if depth == 0 {
			return
		}
	}
}

// member moves from the object at i to the value of its last member
// named key; false when it has none.
func (w *jsonWalker) member(key string) bool {
	found := -1
	w.i++ // {
	w.space()
	for w.b[w.i] != '}' {
		name := w.i
		w.str()
		same := sameKey(w.b[name:w.i], key)
		w.space()
		w.i++ // :
		w.space()
		if same {
			found = w.i
		}
		w.skip()
		w.space()
		if w.b[w.i] == ',' {
			w.i++
			w.space()
		}
	}
	w.i = found
	return found >= 0
}

// element moves from the array at i to its n-th element; false when it
// is shorter.
func (w *jsonWalker) element(n int) bool {
	w.i++ // [
	w.space()
	for ; w.b[w.i] != ']'; n-- {
		if n == 0 {
			return true
		}
		w.skip()
		w.space()
		if w.b[w.i] == ',' {
			w.i++
			w.space()
		}
	}
	return false
}

// sameKey reports whether the quoted JSON string raw is key.
func sameKey(raw []byte, key string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == key
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == key
}
