package jsontop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrDuplicate is Raw's error for a named member given twice.
var ErrDuplicate = errors.New("jsontop: a member is given twice")

// Raw returns the raw values of the top-level members of the object doc
// named names, in the order of names; a name that is absent has nil.
func Raw(doc []byte, names ...string) ([][]byte, error) {
	out := make([][]byte, len(names))
	i := space(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, syntax(i, "not an object")
	}
	i = space(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return out, end(doc, i+1)
	}
	for {
		if i >= len(doc) || doc[i] != '"' {
			return nil, syntax(i, "a member name is expected")
		}
		keyEnd, err := skipString(doc, i)
		if err != nil {
			return nil, err
		}
		key := doc[i:keyEnd]
		if i = space(doc, keyEnd); i >= len(doc) || doc[i] != ':' {
			return nil, syntax(i, "':' is expected")
		}
		i = space(doc, i+1)
		valEnd, err := skipValue(doc, i)
		if err != nil {
			return nil, err
		}
		escaped := bytes.IndexByte(key, '\\') >= 0
		for k, name := range names {
			if !escaped && string(key[1:len(key)-1]) == name || escaped && decodes(key, name) {
				if out[k] != nil {
					return nil, fmt.Errorf("%w: %q", ErrDuplicate, name)
				}
				out[k] = doc[i:valEnd]
			}
		}
		if i = space(doc, valEnd); i >= len(doc) {
			return nil, syntax(i, "the object is not closed")
		}
		switch doc[i] {
		case ',':
			i = space(doc, i+1)
		case '}':
			return out, end(doc, i+1)
		default:
			return nil, syntax(i, "',' or '}' is expected")
		}
	}
}

// Strings is Raw for members whose values are strings: each decoded, ""
// for a member that is absent or not a string. It always returns
// len(names) strings, all "" with an error.
func Strings(doc []byte, names ...string) ([]string, error) {
	out := make([]string, len(names))
	raw, err := Raw(doc, names...)
	if err != nil {
		return out, err
	}
	for k, v := range raw {
		out[k], _ = String(v)
	}
	return out, nil
}

// String decodes a raw JSON string value as encoding/json does (invalid
// UTF-8 becomes U+FFFD); ok is false when raw is not a string.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	plain := utf8.Valid(body)
	for _, c := range body {
		plain = plain && c >= 0x20 && c != '"' && c != '\\'
	}
	if plain {
		return string(body), true
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// decodes reports whether the raw string key decodes to name.
func decodes(key []byte, name string) bool {
	s, ok := String(key)
	return ok && s == name
}

// space returns the index of the first byte at or after i that is not
// JSON whitespace.
func space(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// end checks that nothing but whitespace follows the object.
func end(doc []byte, i int) error {
	if i = space(doc, i); i != len(doc) {
		return syntax(i, "data follows the object")
	}
	return nil
}

// skipString returns the index just past the string that starts at i.
func skipString(doc []byte, i int) (int, error) {
	for j := i + 1; j < len(doc); j++ {
		switch c := doc[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++ // the escaped byte; encoding/json checks the escape itself
		case c < 0x20:
			return 0, syntax(j, "a control character in a string")
		}
	}
	return 0, syntax(len(doc), "a string is not closed")
}

// skipValue returns the index just past the value that starts at i.
func skipValue(doc []byte, i int) (int, error) {
	if i >= len(doc) {
		return 0, syntax(i, "a value is expected")
	}
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(doc); j++ {
			switch doc[j] {
			case '"':
				e, err := skipString(doc, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, syntax(len(doc), "a value is not closed")
	}
	j := i // a number or a literal: a run of their characters
	for j < len(doc) && (doc[j] >= 'a' && doc[j] <= 'z' || doc[j] >= '0' && doc[j] <= '9' || doc[j] == '-' || doc[j] == '+' || doc[j] == '.' || doc[j] == 'E') {
		j++
	}
	if j == i {
		return 0, syntax(i, "a value is expected")
	}
	return j, nil
}

func syntax(at int, what string) error {
	return fmt.Errorf("jsontop: offset %d: %s", at, what)
}
