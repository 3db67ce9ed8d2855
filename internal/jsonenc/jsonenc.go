package jsonenc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// safe marks the bytes String copies as they are: ASCII from
// space to DEL but '"', '\\', '<', '>' and '&'.
var safe = [256]bool{
	' ': true, '!': true, '#': true, '$': true, '%': true, '\'': true, '(': true, ')': true,
	'*': true, '+': true, ',': true, '-': true, '.': true, '/': true, '0': true, '1': true,
	'2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	':': true, ';': true, '=': true, '?': true, '@': true, 'A': true, 'B': true, 'C': true,
	'D': true, 'E': true, 'F': true, 'G': true, 'H': true, 'I': true, 'J': true, 'K': true,
	'L': true, 'M': true, 'N': true, 'O': true, 'P': true, 'Q': true, 'R': true, 'S': true,
	'T': true, 'U': true, 'V': true, 'W': true, 'X': true, 'Y': true, 'Z': true, '[': true,
	']': true, '^': true, '_': true, '`': true, 'a': true, 'b': true, 'c': true, 'd': true,
	'e': true, 'f': true, 'g': true, 'h': true, 'i': true, 'j': true, 'k': true, 'l': true,
	'm': true, 'n': true, 'o': true, 'p': true, 'q': true, 'r': true, 's': true, 't': true,
	'u': true, 'v': true, 'w': true, 'x': true, 'y': true, 'z': true, '{': true, '|': true,
	'}': true, '~': true, '\x7f': true,
}

// String appends s as encoding/json writes a string (with HTML
// escaping, its default): the safe bytes as they are; '"' and '\\' after
// a backslash; \b, \f, \n, \r and \t by name; other control characters
// and '<', '>', '&' as \u00XX; valid UTF-8 as it is but U+2028 and U+2029
// (\u2028, \u2029); each byte of invalid UTF-8 as \ufffd.
func String(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if safe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Marshaled appends what a MarshalJSON method returned as
// encoding/json does: compacted and HTML-escaped, an error when it is not
// JSON. A string of safe bytes or a number is already in that form.
func Marshaled(b, src []byte) ([]byte, error) {
	if plain(src) {
		return append(b, src...), nil
	}
	var c bytes.Buffer
	if err := json.Compact(&c, src); err != nil {
		return b, err
	}
	out := bytes.NewBuffer(b)
	json.HTMLEscape(out, c.Bytes())
	return out.Bytes(), nil
}

// plain reports whether s is a JSON string of safe bytes
// (safe) or a JSON number.
func plain(s []byte) bool {
	n := len(s)
	if n >= 2 && s[0] == '"' && s[n-1] == '"' {
		for _, c := range s[1 : n-1] {
			if !safe[c] {
				return false
			}
		}
		return true
	}
	digits := func(i int) int {
		for i < n && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < n && s[i] == '-' {
		i++
	}
	switch {
	case i < n && s[i] == '0':
		i++
	case i < n && '1' <= s[i] && s[i] <= '9':
		i = digits(i)
	default:
		return false
	}
	if i < n && s[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == n
}

// Decimal appends what d.MarshalJSON() returns (shopspring/decimal:
// its String() quoted), without allocating, when the package's settings
// are its defaults and the coefficient has at most 18 digits; else it
// appends MarshalJSON's result.
func Decimal(b []byte, d decimal.Decimal) ([]byte, error) {
	exp := d.Exponent()
	if decimal.MarshalJSONWithoutQuotes || !decimal.TrimTrailingZeros || decimal.UseScientificNotation ||
		d.NumDigits() > 18 || exp > 40 || exp < -40 {
		out, err := d.MarshalJSON()
		if err != nil {
			return b, err
		}
		return Marshaled(b, out)
	}
	c := d.CoefficientInt64()
	b = append(b, '"')
	if c < 0 {
		b = append(b, '-')
	}
	var digits [24]byte
	str := strconv.AppendUint(digits[:0], abs(c), 10)
	switch {
	case exp == 0 || c == 0 && exp > 0:
		b = append(b, str...)
	case exp > 0:
		b = append(b, str...)
		for range exp {
			b = append(b, '0')
		}
	default:
		k := int(-exp) // digits after the point
		if len(str) > k {
			b = append(b, str[:len(str)-k]...)
			str, k = str[len(str)-k:], 0
		} else {
			b = append(b, '0')
			k -= len(str) // zeros after the point, before the digits
		}
		for len(str) > 0 && str[len(str)-1] == '0' {
			str = str[:len(str)-1]
		}
		if len(str) > 0 {
			b = append(b, '.')
			for range k {
				b = append(b, '0')
			}
			b = append(b, str...)
		}
	}
	return append(b, '"'), nil
}

func abs(c int64) uint64 {
	if c < 0 {
		return uint64(-c)
	}
	return uint64(c)
}
