// Package finitejson writes JSON as encoding/json does, except that a
// float that is not a finite number (NaN, +Inf, -Inf), which
// encoding/json refuses, is written as null. One such value, wherever it
// came from, must not make a whole document unwritable: /api/v1/results
// and the results file carry every probe's result (docs/results.md,
// "Numbers that are not finite").
package finitejson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
)

// Marshal returns the JSON encoding of v, as json.Marshal would, with
// every non-finite float written as null.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encode(&b, reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var (
	marshaler     = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// encode writes v. A value of a type without floats, or that writes
// itself, is json.Marshal's to write: the walk goes only where a float
// can be.
func encode(b *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	if !holdsFloat(v.Type()) {
		return delegate(b, v)
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			b.WriteString("null")
			return nil
		}
		return delegate(b, v)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encode(b, v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encodeList(b, v)
	case reflect.Array:
		return encodeList(b, v)
	case reflect.Map:
		return encodeMap(b, v)
	default: // a struct
		b.WriteByte('{')
		if _, err := encodeFields(b, v, true); err != nil {
			return err
		}
		b.WriteByte('}')
		return nil
	}
}

func delegate(b *bytes.Buffer, v reflect.Value) error {
	out, err := json.Marshal(v.Interface())
	b.Write(out)
	return err
}

func encodeList(b *bytes.Buffer, v reflect.Value) error {
	b.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encode(b, v.Index(i)); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// encodeMap writes each value itself and leaves the keys (their text and
// order) to json.Marshal.
func encodeMap(b *bytes.Buffer, v reflect.Value) error {
	if v.IsNil() {
		b.WriteString("null")
		return nil
	}
	out := reflect.MakeMapWithSize(reflect.MapOf(v.Type().Key(), reflect.TypeFor[json.RawMessage]()), v.Len())
	for it := v.MapRange(); it.Next(); {
		var elem bytes.Buffer
		if err := encode(&elem, it.Value()); err != nil {
			return err
		}
		out.SetMapIndex(it.Key(), reflect.ValueOf(json.RawMessage(elem.Bytes())))
	}
	return delegate(b, out)
}

// encodeFields writes v's fields as encoding/json names and omits them,
// an untagged embedded struct's among them; first says whether none was
// written yet, and it returns that for the fields that follow.
func encodeFields(b *bytes.Buffer, v reflect.Value, first bool) (bool, error) {
	for _, f := range fieldsOf(v.Type()) {
		fv := v.Field(f.index)
		if f.embedded {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			var err error
			if first, err = encodeFields(b, fv, first); err != nil {
				return first, err
			}
			continue
		}
		if (f.omitEmpty && isEmpty(fv)) || (f.omitZero && isZero(fv)) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		name, _ := json.Marshal(f.name)
		b.Write(name)
		b.WriteByte(':')
		if err := encode(b, fv); err != nil {
			return first, err
		}
	}
	return first, nil
}

// field is how encoding/json writes one struct field.
type field struct {
	index               int
	name                string
	omitEmpty, omitZero bool
	embedded            bool // an untagged embedded struct (or pointer to one): its fields are written in its place
}

var fieldCache sync.Map // reflect.Type → []field

func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if t := sf.Type; sf.Anonymous && name == "" && (t.Kind() == reflect.Struct || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct) {
			fs = append(fs, field{index: i, embedded: true})
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := field{index: i, name: name}
		for o := range strings.SplitSeq(opts, ",") {
			f.omitEmpty = f.omitEmpty || o == "omitempty"
			f.omitZero = f.omitZero || o == "omitzero"
		}
		fs = append(fs, f)
	}
	fieldCache.Store(t, fs)
	return fs
}

// isEmpty is omitempty's test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return v.IsZero()
	}
	return false
}

// isZero is omitzero's test: the value's IsZero method, or the zero value.
func isZero(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		return (v.Kind() != reflect.Pointer || !v.IsNil()) && z.IsZero()
	}
	return v.IsZero()
}

var floatCache sync.Map // reflect.Type → bool

// holdsFloat says whether a value of t can hold a float that is json's to
// write: false for a type that writes itself.
func holdsFloat(t reflect.Type) bool {
	if h, ok := floatCache.Load(t); ok {
		return h.(bool)
	}
	h := holdsFloatVisiting(t, map[reflect.Type]bool{})
	floatCache.Store(t, h)
	return h
}

// holdsFloatVisiting is holdsFloat for t inside the types being decided
// on the way to it: a recursive type holds a float only through its other
// parts.
func holdsFloatVisiting(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if visiting[t] || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return false
	}
	visiting[t] = true
	defer delete(visiting, t)
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsFloatVisiting(t.Elem(), visiting)
	case reflect.Struct:
		for _, f := range fieldsOf(t) {
			if holdsFloatVisiting(t.Field(f.index).Type, visiting) {
				return true
			}
		}
	}
	return false
}

// WriteIndented writes v to w as Marshal encodes it, indented by two
// spaces and ended by a newline, as a json.Encoder with SetIndent("", "  ")
// would.
func WriteIndented(w io.Writer, v any) error {
	out, err := Marshal(v)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, out, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err = w.Write(b.Bytes())
	return err
}
