package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unicode/utf8"
)

// decodeStrict decodes one JSON value into the generic form used to compare
// two documents semantically: objects become map[string]any, arrays []any,
// numbers json.Number (their literal text, so 1 and 1.0 differ), strings,
// booleans and nil.
//
// It is stricter than encoding/json, because a verifier that accepts what a
// second implementation reads differently is a forgery vector:
//   - the input must be valid UTF-8 (encoding/json silently replaces invalid
//     bytes with U+FFFD, so two different byte strings would compare equal);
//   - an object must not repeat a member name (RFC 8259 §4 leaves duplicates
//     to the implementation: Go keeps the last, others keep the first);
//   - nothing but white space may follow the value.
func decodeStrict(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// maxJSONDepth bounds nesting so that hostile input cannot exhaust the stack;
// a receipt nests four levels deep.
const maxJSONDepth = 32

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object member name is %T", kt)
				}
				if _, dup := obj[name]; dup {
					return nil, fmt.Errorf("duplicate member %q", name)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj[name] = v
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		return t, nil
	}
}

// sameJSON reports whether two generic values from decodeStrict are equal.
// Member order and white space never matter; number literals must match
// exactly (json.Number is a string).
func sameJSON(a, b any) bool { return reflect.DeepEqual(a, b) }
