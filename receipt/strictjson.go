package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeStrict decodes one JSON value (RFC 8259) into the generic form used
// to compare two documents semantically: objects become map[string]any,
// arrays []any, numbers json.Number (their literal text, so 1 and 1.0
// differ), strings, booleans and nil.
//
// It is stricter than encoding/json, because a verifier that accepts what a
// second implementation reads differently is a forgery vector:
//   - the input must be valid UTF-8, and a \u escape must not be a lone
//     surrogate (encoding/json turns both into U+FFFD, so different byte
//     strings would compare equal);
//   - an object must not repeat a member name (RFC 8259 §4 leaves duplicates
//     to the implementation: Go keeps the last, others keep the first);
//   - nothing but white space may follow the value.
func decodeStrict(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("invalid UTF-8")
	}
	p := &jsonParser{data: data}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, p.errorf("data after the JSON value")
	}
	return v, nil
}

// maxJSONDepth bounds nesting so that hostile input cannot exhaust the stack;
// a receipt nests four levels deep.
const maxJSONDepth = 32

type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("json: offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nested deeper than %d levels", maxJSONDepth)
	}
	p.space()
	if p.pos == len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, lit := range [...]struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if bytes.HasPrefix(p.data[p.pos:], []byte(lit.text)) {
				p.pos += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *jsonParser) object(depth int) (any, error) {
	p.pos++ // '{'
	obj := map[string]any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	for {
		p.space()
		if p.pos == len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a member name")
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[name]; dup {
			return nil, p.errorf("duplicate member %q", name)
		}
		p.space()
		if p.pos == len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':'")
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		obj[name] = v
		p.space()
		if p.pos == len(p.data) {
			return nil, p.errorf("unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return obj, nil
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.pos++ // '['
	arr := []any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.space()
		if p.pos == len(p.data) {
			return nil, p.errorf("unterminated array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return arr, nil
		default:
			return nil, p.errorf("expected ',' or ']'")
		}
	}
}

// number accepts RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (p *jsonParser) number() (any, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errorf("malformed number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	return json.Number(p.data[start:p.pos]), nil
}

// str decodes a string (RFC 8259 §7). The input is already valid UTF-8.
func (p *jsonParser) str() (string, error) {
	p.pos++ // '"'
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", p.errorf("control character in string")
		}
		p.pos++
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) escapedStr(start int) (string, error) {
	var b strings.Builder
	b.Write(p.data[start:p.pos])
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c != '\\':
			b.WriteByte(c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			break
		}
		e := p.data[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
			continue
		case 'b':
			b.WriteByte('\b')
			continue
		case 'f':
			b.WriteByte('\f')
			continue
		case 'n':
			b.WriteByte('\n')
			continue
		case 'r':
			b.WriteByte('\r')
			continue
		case 't':
			b.WriteByte('\t')
			continue
		case 'u':
		default:
			return "", p.errorf("invalid escape \\%c", e)
		}
		r1, ok := p.hex4()
		if !ok {
			return "", p.errorf("invalid \\u escape")
		}
		switch {
		case utf16.IsSurrogate(r1):
			// A surrogate must be a high one followed by an escaped low one.
			var r2 rune = -1
			if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
				p.pos += 2
				r2, ok = p.hex4()
			}
			r := utf16.DecodeRune(r1, r2)
			if !ok || r == utf8.RuneError {
				return "", p.errorf("lone surrogate in \\u escape")
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r1)
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// sameJSON reports whether two generic values from decodeStrict are equal.
// Member order and white space never matter; number literals must match
// exactly (json.Number is a string).
func sameJSON(a, b any) bool { return reflect.DeepEqual(a, b) }
