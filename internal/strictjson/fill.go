package strictjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Filling the value once the scan has passed.
//
// encoding/json decoded a settlement request in ~15 µs of the server's
// CPU, three times the scan: it validates the bytes again, looks up every
// member's field through its own caches, and checks each value's syntax
// once more. The request types of fiscal402 are plain (strings, booleans,
// numbers, structs, pointers, slices, string-keyed maps), and the scan has
// already proven the document well-formed, its member names exact and
// unique and its strings free of lone surrogates. fill stores such a
// document into such a type directly, as encoding/json would.
//
// It does only what it knows to be what encoding/json does, and hands over
// otherwise: a type with an UnmarshalJSON or UnmarshalText method, an
// interface, an embedded struct, an array, a []byte, a json.Number, a
// ",string" option or an unusual tag never gets a plan (planOf is nil) and
// is decoded by encoding/json, as before; a value of the wrong JSON type
// for its field (which encoding/json reports as an *UnmarshalTypeError),
// or a number its field cannot hold, stops the fill, the target is reset to
// its zero value, and encoding/json decodes it and reports the error. fill
// only starts on a zero target, so the reset gives encoding/json exactly
// the value it would have had. FuzzFillMatchesUnmarshal holds the two to
// the same values and the same errors.
//
// DecodeOpen keeps encoding/json: a member it skips as unknown may still
// match a field by encoding/json's case-insensitive rule, which fill does
// not follow.

// plan is how fill stores a JSON value into one Go type.
type plan struct {
	kind   reflect.Kind
	typ    reflect.Type
	elem   *plan            // pointer, slice, map: the element's plan
	fields map[string]field // struct: JSON member name → field
}

type field struct {
	index int
	plan  *plan
}

// plans memoizes planOf, as typeFields does fieldsOf: a type's plan never
// changes. A nil *plan stored means encoding/json decodes the type.
var plans sync.Map // reflect.Type → *plan

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
)

// planOf is t's plan, nil when fill does not decode t.
func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p, ok := buildPlan(t, map[reflect.Type]*plan{})
	if !ok {
		p = nil
	}
	stored, _ := plans.LoadOrStore(t, p)
	return stored.(*plan)
}

// buildPlan builds t's plan; building holds the plans under construction
// (a type may contain itself through a pointer, slice or map).
func buildPlan(t reflect.Type, building map[reflect.Type]*plan) (*plan, bool) {
	if p := building[t]; p != nil {
		return p, true
	}
	if t == numberType || t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType) ||
		reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil, false
	}
	p := &plan{kind: t.Kind(), typ: t}
	building[t] = p
	var ok bool
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return p, true
	case reflect.Pointer:
		p.elem, ok = buildPlan(t.Elem(), building)
		return p, ok
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // base64 in encoding/json
			return nil, false
		}
		p.elem, ok = buildPlan(t.Elem(), building)
		return p, ok
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String || reflect.PointerTo(k).Implements(textUnmarshalerType) {
			return nil, false
		}
		p.elem, ok = buildPlan(t.Elem(), building)
		return p, ok
	case reflect.Struct:
		p.fields = make(map[string]field, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return nil, false // encoding/json's promotion rules
			}
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" {
				name = f.Name
			} else if !plainName(name) {
				return nil, false // encoding/json's isValidTag
			}
			for opt := range strings.SplitSeq(opts, ",") {
				if opt == "string" {
					return nil, false
				}
			}
			if _, dup := p.fields[name]; dup {
				return nil, false // encoding/json's conflict rules
			}
			fp, ok := buildPlan(f.Type, building)
			if !ok {
				return nil, false
			}
			p.fields[name] = field{index: i, plan: fp}
		}
		return p, true
	}
	return nil, false // interfaces, arrays, channels, functions, complex numbers
}

// plainName reports whether a tag's name is made of letters, digits and
// "_-.", which encoding/json takes as they are.
func plainName(s string) bool {
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// filler reads a document the scanner has validated.
type filler struct {
	data []byte
	pos  int
}

func (f *filler) space() {
	for f.pos < len(f.data) {
		switch f.data[f.pos] {
		case ' ', '\t', '\n', '\r':
			f.pos++
		default:
			return
		}
	}
}

// value stores the next JSON value into v (addressable, zero) by p; false:
// encoding/json must decode the document.
func (f *filler) value(p *plan, v reflect.Value) bool {
	f.space()
	if f.pos >= len(f.data) {
		return false
	}
	c := f.data[f.pos]
	if c == 'n' { // null leaves a zero value as it is, as encoding/json does
		f.pos += len("null")
		return true
	}
	switch p.kind {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(p.typ.Elem()))
		}
		return f.value(p.elem, v.Elem())
	case reflect.String:
		if c != '"' {
			return false
		}
		s, ok := f.str()
		v.SetString(s)
		return ok
	case reflect.Bool:
		switch c {
		case 't':
			f.pos += len("true")
			v.SetBool(true)
		case 'f':
			f.pos += len("false")
		default:
			return false
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		lit, ok := f.number()
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(lit, 10, 64)
		if err != nil || v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		lit, ok := f.number()
		if !ok {
			return false
		}
		n, err := strconv.ParseUint(lit, 10, 64)
		if err != nil || v.OverflowUint(n) {
			return false
		}
		v.SetUint(n)
		return true
	case reflect.Float32, reflect.Float64:
		lit, ok := f.number()
		if !ok {
			return false
		}
		n, err := strconv.ParseFloat(lit, p.typ.Bits())
		if err != nil || v.OverflowFloat(n) {
			return false
		}
		v.SetFloat(n)
		return true
	case reflect.Struct:
		if c != '{' {
			return false
		}
		return f.members(func(name []byte) bool {
			fd, known := p.fields[string(name)] // no allocation for the lookup
			return known && f.value(fd.plan, v.Field(fd.index))
		})
	case reflect.Map:
		if c != '{' {
			return false
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(p.typ))
		}
		return f.members(func(name []byte) bool {
			elem := reflect.New(p.typ.Elem()).Elem()
			if !f.value(p.elem, elem) {
				return false
			}
			key := reflect.New(p.typ.Key()).Elem()
			key.SetString(string(name))
			v.SetMapIndex(key, elem)
			return true
		})
	case reflect.Slice:
		if c != '[' {
			return false
		}
		f.pos++
		f.space()
		if f.pos < len(f.data) && f.data[f.pos] == ']' {
			f.pos++
			v.Set(reflect.MakeSlice(p.typ, 0, 0)) // [] is an empty slice, not nil
			return true
		}
		for {
			n := v.Len()
			if n == v.Cap() {
				v.Grow(1)
			}
			v.SetLen(n + 1)
			if !f.value(p.elem, v.Index(n)) {
				return false
			}
			f.space()
			if f.pos >= len(f.data) {
				return false
			}
			switch f.data[f.pos] {
			case ',':
				f.pos++
			case ']':
				f.pos++
				return true
			default:
				return false
			}
		}
	}
	return false
}

// members reads an object's members, calling member with each one's
// unescaped name, the reader at its value.
func (f *filler) members(member func(name []byte) bool) bool {
	f.pos++ // {
	for {
		f.space()
		if f.pos >= len(f.data) {
			return false
		}
		switch f.data[f.pos] {
		case '}':
			f.pos++
			return true
		case ',':
			f.pos++
			continue
		case '"':
		default:
			return false
		}
		start, end, ok := f.token()
		if !ok {
			return false
		}
		name := f.data[start:end]
		if escaped(name) { // rare: no name of fiscal402 needs an escape
			s, ok := unescape(name)
			if !ok {
				return false
			}
			name = []byte(s)
		}
		f.space()
		if f.pos >= len(f.data) || f.data[f.pos] != ':' {
			return false
		}
		f.pos++
		if !member(name) {
			return false
		}
	}
}

// token reads a string token; start and end delimit its escaped contents.
func (f *filler) token() (start, end int, ok bool) {
	f.pos++ // "
	start = f.pos
	for f.pos < len(f.data) {
		switch f.data[f.pos] {
		case '"':
			end = f.pos
			f.pos++
			return start, end, true
		case '\\':
			f.pos += 2
		default:
			f.pos++
		}
	}
	return 0, 0, false
}

// str reads a string token's value.
func (f *filler) str() (string, bool) {
	start, end, ok := f.token()
	if !ok {
		return "", false
	}
	raw := f.data[start:end]
	if !escaped(raw) {
		return string(raw), true
	}
	return unescape(raw)
}

// number reads a number token (its syntax checked by the scan).
func (f *filler) number() (string, bool) {
	start := f.pos
	for f.pos < len(f.data) {
		switch c := f.data[f.pos]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			f.pos++
			continue
		}
		break
	}
	return string(f.data[start:f.pos]), f.pos > start
}

func escaped(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' {
			return true
		}
	}
	return false
}

// unescape decodes the escapes of a string the scan validated (every
// surrogate escape in a pair).
func unescape(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+2)
			if !ok {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(raw, i+2)
				if !ok || i+1 >= len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
					return "", false
				}
				if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
					return "", false
				}
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}

// hex4 reads the four hex digits at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at < 0 || at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
