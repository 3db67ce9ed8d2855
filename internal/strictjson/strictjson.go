// Package strictjson decodes JSON from outside callers strictly: one object,
// exact member names, no unknown or repeated members, no lone UTF-16
// surrogates, bounded nesting, and every problem reported with the JSON
// pointer (RFC 6901) of the member that caused it.
//
// encoding/json alone is too lenient for a request that is signed into a
// receipt: it matches member names case-insensitively, keeps the last of two
// members with one name, replaces a lone surrogate escape ("\ud800") with
// U+FFFD, and reports an unknown member by its name only. Decode first scans
// the bytes once with a small validator that knows the target's Go type, and
// only then fills the value, itself for the plain types of fiscal402's
// requests (fill.go) and by encoding/json for any other, with the values
// and errors encoding/json gives: what is signed is exactly what was sent.
//
// # Cost
//
// The scan is linear in the input and allocation-free on the happy path: it
// keeps the path as a stack of byte ranges of the input (in the scanner, on
// the caller's stack) and builds a pointer string only when it reports an
// error, and it reads the member names of a struct type by reflection once
// per process, not once per object. Nesting deeper than MaxDepth is
// refused before anything is decoded, so no request under the body limit
// makes the decoder allocate more than a small multiple of its size. The
// fill allocates the strings, slices, maps and pointers the value holds.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fiscal402/fiscal402/internal/shown"
)

// MaxDepth is the deepest nesting of objects and arrays accepted. Requests
// of fiscal402 are at most four levels deep; 32 is the receipt decoder's
// limit too.
const MaxDepth = 32

// Error is a decoding problem: Field is the JSON pointer of the offending
// member ("" for the document as a whole) and Detail one sentence.
type Error struct {
	Field  string
	Detail string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Detail
	}
	return e.Field + ": " + e.Detail
}

// Decode decodes body, which must hold exactly one JSON object, into v (a
// pointer to a struct). Every member name must equal the json name of a
// field of the target (maps accept any name); a JSON number where the field
// is a string is an error that says so. The returned error is an *Error.
func Decode(body []byte, v any) error { return decode(body, v, false, true) }

// DecodeOpen is Decode for documents that grow between versions (x402's):
// members the target has no field for are skipped (their syntax, nesting
// and strings still checked); repeated members are still refused.
func DecodeOpen(body []byte, v any) error { return decode(body, v, true, false) }

// decode scans body and decodes it into v: with fast, by fill where it
// can (fill.go), else by encoding/json.
func decode(body []byte, v any, open, fast bool) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("strictjson: Decode needs a pointer, got %T", v)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return &Error{Detail: "the body is empty; a JSON object is required"}
	}
	if !utf8.Valid(body) {
		return &Error{Detail: "the body is not valid UTF-8"}
	}
	s := scanner{data: body, open: open}
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] != '{' {
		return &Error{Detail: "the body must be a JSON object"}
	}
	if err := s.value(t.Elem(), 0); err != nil {
		return err
	}
	s.space()
	if s.pos != len(s.data) {
		return &Error{Detail: "unexpected data after the JSON object"}
	}
	if p := fillPlan(v, t); fast && p != nil {
		rv := reflect.ValueOf(v).Elem()
		f := filler{data: body}
		if f.value(p, rv) {
			return nil
		}
		rv.SetZero() // as it was: encoding/json decodes it and names the problem
	}
	if err := json.Unmarshal(body, v); err != nil {
		return typeError(err, body, t.Elem(), open)
	}
	return nil
}

// fillPlan is the plan by which fill decodes into v (a pointer of type t),
// or nil: fill takes a struct type with a plan, and a zero target (it
// never merges into a value that is already set, as encoding/json would).
func fillPlan(v any, t reflect.Type) *plan {
	if t.Elem().Kind() != reflect.Struct {
		return nil
	}
	p := planOf(t.Elem())
	if p == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.IsNil() || !rv.Elem().IsZero() {
		return nil
	}
	return p
}

// decimalMember reports whether the member at pointer field holds a
// decimal in a string (an amount, a rate), whose error says how one is
// written: its name speaks of an amount, a currency or a percentage.
func decimalMember(field string) bool {
	name := strings.ToLower(field[strings.LastIndexByte(field, '/')+1:])
	for _, w := range []string{"amount", "usdc", "eur", "percent"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// typeError reports the errors encoding/json can still find after the scan:
// a JSON value of the wrong type for its field, named by the pointer of
// the value at the error's offset (valueAt): encoding/json's own path has
// no array indexes and stops at a map.
func typeError(err error, body []byte, root reflect.Type, open bool) *Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := pointerOf(root, typeErr.Field)
		if at, ok := valueAt(body, root, open, typeErr.Offset); ok && withinPath(field, at) {
			field = at
		}
		if typeErr.Value == "number" && typeErr.Type.Kind() == reflect.String {
			if decimalMember(field) {
				return &Error{Field: field, Detail: "must be a JSON string (amounts are decimal strings such as \"1.50\"), not a JSON number"}
			}
			return &Error{Field: field, Detail: "must be a JSON string, not a JSON number"}
		}
		return &Error{Field: field, Detail: fmt.Sprintf("must be a JSON %s, not a JSON %s", kindName(typeErr.Type), typeErr.Value)}
	}
	return &Error{Detail: "the body is not a valid JSON object: " + err.Error()}
}

// valueAt returns the JSON pointer of the innermost value that holds the
// byte before offset, where encoding/json reports a value of the wrong
// type (just after a literal, just inside a '{' or '[').
func valueAt(body []byte, root reflect.Type, open bool, offset int64) (string, bool) {
	if offset < 1 || offset > int64(len(body)) {
		return "", false
	}
	s := scanner{data: body, open: open, find: int(offset)}
	s.space()
	if s.value(root, 0) != nil || !s.found {
		return "", false
	}
	return s.hit, true
}

// withinPath reports whether the pointer at names the member of path or
// one of its elements or entries: at without its array indexes is path
// or lies below it. An offset that is not the body's (a value decoded by
// its own UnmarshalJSON) fails it, and the path is kept.
func withinPath(path, at string) bool {
	var kept []string
	for _, seg := range strings.Split(at, "/") {
		if seg != "" && strings.Trim(seg, "0123456789") == "" {
			continue
		}
		kept = append(kept, seg)
	}
	stripped := strings.Join(kept, "/")
	return stripped == path || strings.HasPrefix(stripped, path+"/")
}

// pointerOf turns encoding/json's dotted field path into a JSON pointer,
// dropping the Go names it writes for embedded structs (which have no level
// in the JSON).
func pointerOf(t reflect.Type, path string) string {
	if path == "" {
		return ""
	}
	var b strings.Builder
	for _, seg := range strings.Split(path, ".") {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != nil && t.Kind() == reflect.Struct {
			if f, ok := t.FieldByName(seg); ok && f.Anonymous && f.Tag.Get("json") == "" {
				t = f.Type
				continue
			}
			t = fieldsOf(t)[seg]
		} else if t != nil && (t.Kind() == reflect.Map || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			t = t.Elem()
		}
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return "number"
}

// scanner validates the syntax of a JSON document and its member names
// against a Go type. path holds the input ranges of the member names (or
// array indexes, as -1-i) leading to the current value.
type scanner struct {
	data  []byte
	pos   int
	path  [MaxDepth + 1]segment // path[:depth]: a stack in place, so that the scanner stays on its caller's stack
	depth int
	open  bool // unknown members are skipped, not refused
	// find, when not 0, asks for the pointer of the innermost value that
	// holds the byte at find-1 (valueAt): hit, once found.
	find  int
	found bool
	hit   string
}

type segment struct {
	start, end int // member name's escaped bytes in data, or end < 0: array index -end-1
}

// push adds a segment to the path; value refuses nesting deeper than
// MaxDepth before a value would push past the array.
func (s *scanner) push(seg segment) {
	s.path[s.depth] = seg
	s.depth++
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// pointer renders the current path (plus an optional last member) as a
// JSON pointer; called only to report an error.
func (s *scanner) pointer(last *segment) string {
	var b strings.Builder
	segs := s.path[:s.depth]
	if last != nil {
		segs = append(segs[:len(segs):len(segs)], *last)
	}
	for _, seg := range segs {
		b.WriteByte('/')
		if seg.end < 0 {
			b.WriteString(strconv.Itoa(-seg.end - 1))
			continue
		}
		name, _ := unquote(s.data[seg.start:seg.end])
		name = shown.Bare(name) // a member name the client chose is shown bounded, as in the detail
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func (s *scanner) fail(last *segment, format string, args ...any) *Error {
	return &Error{Field: s.pointer(last), Detail: fmt.Sprintf(format, args...)}
}

func (s *scanner) syntax(what string) *Error {
	return &Error{Field: s.pointer(nil), Detail: fmt.Sprintf("the body is not valid JSON (offset %d): %s", s.pos, what)}
}

// value validates one value whose Go type is t (nil: any value accepted).
func (s *scanner) value(t reflect.Type, depth int) *Error {
	s.space()
	start := s.pos
	err := s.token(t, depth)
	if s.find != 0 && err == nil && !s.found && start < s.find && s.find <= s.pos {
		s.found, s.hit = true, s.pointer(nil) // inner values end first
	}
	return err
}

// token validates the value that starts at s.pos.
func (s *scanner) token(t reflect.Type, depth int) *Error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s.pos >= len(s.data) {
		return s.syntax("unexpected end of input")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		if depth >= MaxDepth {
			return s.fail(nil, "is nested more than %d levels deep", MaxDepth)
		}
		return s.object(t, depth+1)
	case c == '[':
		if depth >= MaxDepth {
			return s.fail(nil, "is nested more than %d levels deep", MaxDepth)
		}
		return s.array(t, depth+1)
	case c == '"':
		_, _, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return s.syntax(fmt.Sprintf("unexpected character %q", s.data[s.pos]))
}

func (s *scanner) literal(word string) *Error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return s.syntax("invalid literal")
	}
	s.pos += len(word)
	return nil
}

func (s *scanner) number() *Error {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	intStart := s.pos
	if digits() == 0 || (s.data[intStart] == '0' && s.pos-intStart > 1) {
		return s.syntax("invalid number")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return s.syntax("invalid number")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.syntax("invalid number")
		}
	}
	if s.pos == start {
		return s.syntax("invalid number")
	}
	return nil
}

// str validates a string token and returns the range of its contents
// (between the quotes, still escaped). Lone surrogate escapes are refused.
func (s *scanner) str() (start, end int, err *Error) {
	s.pos++ // opening quote
	start = s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			end = s.pos
			s.pos++
			return start, end, nil
		case c < 0x20:
			return 0, 0, s.syntax("control character in a string")
		case c == '\\':
			if err := s.escape(); err != nil {
				return 0, 0, err
			}
		default:
			s.pos++
		}
	}
	return 0, 0, s.syntax("unterminated string")
}

func (s *scanner) escape() *Error {
	s.pos++ // backslash
	if s.pos >= len(s.data) {
		return s.syntax("unterminated escape")
	}
	switch s.data[s.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return nil
	case 'u':
		r, ok := s.hex4(s.pos + 1)
		if !ok {
			return s.syntax("invalid \\u escape")
		}
		s.pos += 5
		if !utf16.IsSurrogate(r) {
			return nil
		}
		// A surrogate must be a high one followed by an escaped low one.
		if r < 0xdc00 && s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
			if lo, ok := s.hex4(s.pos + 2); ok && lo >= 0xdc00 && lo <= 0xdfff {
				s.pos += 6
				return nil
			}
		}
		return s.fail(nil, "contains a lone UTF-16 surrogate (\\u%04x), which is not a character: send valid Unicode", r)
	}
	return s.syntax("invalid escape")
}

func (s *scanner) hex4(at int) (rune, bool) {
	if at+4 > len(s.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.data[at:at+4]), 16, 32)
	return rune(v), err == nil
}

func (s *scanner) object(t reflect.Type, depth int) *Error {
	s.pos++ // {
	var fields map[string]reflect.Type
	anyKey := t == nil
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = fieldsOf(t)
	case t.Kind() == reflect.Map:
		anyKey, elem = true, t.Elem()
	case t.Kind() == reflect.Interface:
		anyKey = true
	default:
		anyKey = true // a type mismatch: encoding/json names it afterwards
	}
	var seenBuf [16]segment // the members met so far; more only in an unusually wide object
	seen := seenBuf[:0]
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.syntax("expected a member name")
		}
		ks, ke, err := s.str()
		if err != nil {
			return err
		}
		key := segment{ks, ke}
		for _, prev := range seen {
			if sameName(s.data[prev.start:prev.end], s.data[ks:ke]) {
				name, _ := unquote(s.data[ks:ke])
				return s.fail(&key, "member %s appears more than once", shown.Quote(name))
			}
		}
		seen = append(seen, key)
		next := elem
		if !anyKey {
			ft, known := lookup(fields, s.data[ks:ke])
			switch {
			case known:
				next = ft
			case !s.open:
				name, _ := unquote(s.data[ks:ke])
				return s.fail(&key, "unknown field %s (check the spelling; names are case-sensitive and unknown fields are rejected)", shown.Quote(name))
			}
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.syntax("expected ':' after a member name")
		}
		s.pos++
		s.push(key)
		if err := s.value(next, depth); err != nil {
			return err
		}
		s.depth--
		s.space()
		if s.pos >= len(s.data) {
			return s.syntax("unterminated object")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.syntax("expected ',' or '}' in an object")
		}
	}
}

func (s *scanner) array(t reflect.Type, depth int) *Error {
	s.pos++ // [
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.push(segment{end: -i - 1})
		if err := s.value(elem, depth); err != nil {
			return err
		}
		s.depth--
		s.space()
		if s.pos >= len(s.data) {
			return s.syntax("unterminated array")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.syntax("expected ',' or ']' in an array")
		}
	}
}

// sameName compares two escaped member names by value; the common case
// (no escapes) compares bytes.
func sameName(a, b []byte) bool {
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return bytes.Equal(a, b)
	}
	x, _ := unquote(a)
	y, _ := unquote(b)
	return x == y
}

// unquote decodes the escaped contents of a validated string token.
func unquote(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	var out string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &out); err != nil {
		return "", false
	}
	return out, true
}

// lookup finds the field of an escaped member name; a name without escapes
// (every name fiscal402 knows) is looked up without copying it.
func lookup(fields map[string]reflect.Type, raw []byte) (reflect.Type, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		ft, ok := fields[string(raw)]
		return ft, ok
	}
	name, ok := unquote(raw)
	if !ok {
		return nil, false
	}
	ft, known := fields[name]
	return ft, known
}

// typeFields memoizes fieldsOf: a struct type's members never change, and
// reading them with reflect for every object of every request cost more
// than the rest of the scan. Its maps are read, never written, once stored.
var typeFields sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf maps the JSON member names of a struct's exported fields
// (embedded structs promoted) to their types. The map is shared: callers
// must not modify it.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := typeFields.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m, _ := typeFields.LoadOrStore(t, structFields(t))
	return m.(map[string]reflect.Type)
}

// structFields is fieldsOf, computed.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range fieldsOf(ft) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
