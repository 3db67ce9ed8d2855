package receipt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
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
	data  []byte
	pos   int
	names [][]byte // skipObject's member names, a stack over nested objects
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
	b, err := p.numberSpan()
	if err != nil {
		return nil, err
	}
	return json.Number(b), nil
}

// str decodes a string (RFC 8259 §7). The input is already valid UTF-8.
func (p *jsonParser) str() (string, error) {
	p.pos++ // '"'
	start := p.pos
	if end, ok := plainString(p.data[start:]); ok {
		p.pos = start + end + 1
		return string(p.data[start : start+end]), nil
	}
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
	// The value is at most as long as its spelling, which ends at the
	// first quote that is not escaped (one of the quotes from here on).
	if end := stringLen(p.data[start-1:]); end > 0 {
		b.Grow(end)
	}
	b.Write(p.data[start:p.pos])
	for p.pos < len(p.data) {
		// Copy the run of plain bytes up to the next quote, backslash
		// or control character at once.
		run := p.pos
		for run < len(p.data) {
			if c := p.data[run]; c == '"' || c == '\\' || c < 0x20 {
				break
			}
			run++
		}
		b.Write(p.data[p.pos:run])
		p.pos = run
		if p.pos == len(p.data) {
			break
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character in string")
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
// exactly (json.Number is a string). Verify no longer uses it on the hot
// path (see compactEqual); tests do.
func sameJSON(a, b any) bool { return reflect.DeepEqual(a, b) }

// absent marks a member that one side of a comparison lacks.
const absent = "(absent)"

// difference is where two JSON values first differ, with each side's value
// as compact JSON text (or absent).
type difference struct{ path, a, b string }

// firstDifference finds the first place, in sorted member order, where two
// generic values from decodeStrict differ, as a JSON pointer (RFC 6901).
func firstDifference(a, b any, path string) (difference, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		names := make([]string, 0, len(x)+len(y))
		for k := range x {
			names = append(names, k)
		}
		for k := range y {
			if _, dup := x[k]; !dup {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		for _, k := range names {
			p := path + "/" + escapePointer(k)
			xv, inX := x[k]
			yv, inY := y[k]
			switch {
			case !inX:
				return difference{p, absent, jsonText(yv)}, true
			case !inY:
				return difference{p, jsonText(xv), absent}, true
			}
			if d, ok := firstDifference(xv, yv, p); ok {
				return d, true
			}
		}
		return difference{}, false
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := range max(len(x), len(y)) {
			p := path + "/" + strconv.Itoa(i)
			switch {
			case i >= len(x):
				return difference{p, absent, jsonText(y[i])}, true
			case i >= len(y):
				return difference{p, jsonText(x[i]), absent}, true
			}
			if d, ok := firstDifference(x[i], y[i], p); ok {
				return d, true
			}
		}
		return difference{}, false
	}
	if reflect.DeepEqual(a, b) {
		return difference{}, false
	}
	if path == "" {
		path = "/"
	}
	return difference{path, jsonText(a), jsonText(b)}, true
}

// jsonText renders a generic value as compact JSON, shortened for a message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	const limit = 120
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// compactEqual reports whether the valid JSON text a, without the white
// space between its tokens, is exactly b. a must have passed the strict
// parser: only then is every byte of white space outside a string
// insignificant. A string is compared as one chunk up to its closing
// quote (the first quote not escaped).
func compactEqual(a, b []byte) bool {
	j := 0
	for i := 0; i < len(a); {
		c := a[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case '"':
			n := stringLen(a[i:])
			if j+n > len(b) || !bytes.Equal(a[i:i+n], b[j:j+n]) {
				return false
			}
			i, j = i+n, j+n
			continue
		}
		if j == len(b) || b[j] != c {
			return false
		}
		i, j = i+1, j+1
	}
	return j == len(b)
}

// stringLen is the length of the JSON string at the start of s, quotes
// included; s is valid JSON.
func stringLen(s []byte) int {
	for i := 1; ; {
		k := bytes.IndexByte(s[i:], '"')
		if k < 0 {
			return len(s)
		}
		end := i + k
		// The quote ends the string unless an odd run of backslashes
		// precedes it.
		bs := 0
		for end-1-bs >= 1 && s[end-1-bs] == '\\' {
			bs++
		}
		if bs%2 == 0 {
			return end + 1
		}
		i = end + 1
	}
}

// receiptDoc is a receipt document as parseReceipt reads it: the four
// string members, and the readable claims exactly as written.
type receiptDoc struct {
	spec, id, tlogProof string
	// jws (1.0.0 to 3.0.0), payload (4.0.0: the base64url text of the
	// leaf) and claims are the bytes of the document (jws and payload
	// decoded only if written with escapes), not copies.
	jws    []byte
	claims []byte
	// v4: the document has a payload member instead of jws (4.0.0).
	v4      bool
	payload []byte
	// claimsUnchecked: claims were only delimited (scanReceipt), not
	// validated; Verify proves them valid by their equality with the
	// signed payload (sameTokens), or answers as parseReceipt would.
	claimsUnchecked bool
}

// parseReceipt reads the receipt document: a JSON object with exactly the
// members spec, id, claims (an object), jws and tlog_proof (strings), or,
// for 4.0.0, payload in place of jws.
// Unknown members are refused: anything unsigned beside the claims could be
// read as part of the receipt. It accepts exactly what decodeStrict accepts
// (FuzzParseReceipt compares them), but builds nothing for the claims: it
// validates them in place and keeps their bytes for compactEqual.
func parseReceipt(data []byte) (receiptDoc, error) { return readReceipt(data, false) }

// scanReceipt is parseReceipt that only delimits the readable claims
// (doc.claimsUnchecked) instead of validating them: Verify compares them
// with the signed payload, whose validity it proves anyway, and then needs
// no second validation (sameTokens). When it fails, Verify answers with
// parseReceipt's error if parseReceipt fails, so that the step and the
// message of every failure stay those of parseReceipt first.
func scanReceipt(data []byte) (receiptDoc, error) { return readReceipt(data, true) }

func readReceipt(data []byte, scanClaims bool) (receiptDoc, error) {
	if len(data) > MaxInputSize {
		return receiptDoc{}, fmt.Errorf("larger than %d bytes", MaxInputSize)
	}
	if !utf8.Valid(data) {
		return receiptDoc{}, errors.New("invalid UTF-8")
	}
	p := &jsonParser{data: data}
	p.space()
	if p.pos == len(p.data) {
		return receiptDoc{}, p.errorf("unexpected end of input")
	}
	if p.data[p.pos] != '{' {
		// Not an object: report a syntax error if there is one, as a
		// full decode would.
		if err := p.skip(0); err != nil {
			return receiptDoc{}, err
		}
		if p.space(); p.pos != len(p.data) {
			return receiptDoc{}, p.errorf("data after the JSON value")
		}
		return receiptDoc{}, errors.New("not a JSON object")
	}
	var doc receiptDoc
	var names []string
	var wrongType []string // members of the wrong type, reported after the syntax is known good
	claimsSeen := false
	p.pos++
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.space()
			if p.pos == len(p.data) || p.data[p.pos] != '"' {
				return receiptDoc{}, p.errorf("expected a member name")
			}
			name, err := p.str()
			if err != nil {
				return receiptDoc{}, err
			}
			if slices.Contains(names, name) {
				return receiptDoc{}, p.errorf("duplicate member %q", name)
			}
			names = append(names, name)
			p.space()
			if p.pos == len(p.data) || p.data[p.pos] != ':' {
				return receiptDoc{}, p.errorf("expected ':'")
			}
			p.pos++
			p.space()
			var dst *string
			switch name {
			case "spec":
				dst = &doc.spec
			case "id":
				dst = &doc.id
			case "tlog_proof":
				dst = &doc.tlogProof
			}
			isString := p.pos < len(p.data) && p.data[p.pos] == '"'
			switch {
			case (name == "jws" || name == "payload") && isString:
				raw, decoded, err := p.strSpan()
				if err != nil {
					return receiptDoc{}, err
				}
				if decoded != nil {
					raw = decoded
				}
				if name == "jws" {
					doc.jws = raw
				} else {
					doc.payload, doc.v4 = raw, true
				}
			case dst != nil && isString:
				if *dst, err = p.str(); err != nil {
					return receiptDoc{}, err
				}
			case name == "claims" && p.pos < len(p.data) && p.data[p.pos] == '{':
				start := p.pos
				if scanClaims {
					if !p.delimit() {
						return receiptDoc{}, p.errorf("unterminated claims")
					}
					doc.claimsUnchecked = true
				} else if err := p.skip(1); err != nil {
					return receiptDoc{}, err
				}
				doc.claims, claimsSeen = data[start:p.pos], true
			default:
				if err := p.skip(1); err != nil {
					return receiptDoc{}, err
				}
				if dst != nil || name == "claims" || name == "jws" || name == "payload" {
					wrongType = append(wrongType, name)
				}
			}
			p.space()
			if p.pos == len(p.data) {
				return receiptDoc{}, p.errorf("unterminated object")
			}
			if p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.data[p.pos] == '}' {
				p.pos++
				break
			}
			return receiptDoc{}, p.errorf("expected ',' or '}'")
		}
	}
	if p.space(); p.pos != len(p.data) {
		return receiptDoc{}, p.errorf("data after the JSON value")
	}
	// The proof of the claims is the jws member, or in 4.0.0 (a document
	// with a payload member and no jws) the payload.
	proof := "jws"
	if slices.Contains(names, "payload") && !slices.Contains(names, "jws") {
		proof = "payload"
	}
	for _, name := range []string{"spec", "id", proof, "tlog_proof"} {
		if !slices.Contains(names, name) || slices.Contains(wrongType, name) {
			return receiptDoc{}, fmt.Errorf("member %q missing or not a string", name)
		}
	}
	if !claimsSeen {
		return receiptDoc{}, errors.New(`member "claims" missing or not an object`)
	}
	if len(names) != 5 {
		if proof == "payload" {
			return receiptDoc{}, errors.New("members other than spec, id, claims, payload, tlog_proof")
		}
		return receiptDoc{}, errors.New("members other than spec, id, claims, jws, tlog_proof")
	}
	return doc, nil
}

// delimit moves past the object or array at pos without validating it:
// brackets are counted outside strings, and a string ends at the first
// quote not escaped. On valid JSON it ends where skip ends.
func (p *jsonParser) delimit() bool {
	depth := 0
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '"':
			p.pos += stringLen(p.data[p.pos:])
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				p.pos++
				return true
			}
		}
		p.pos++
	}
	return false
}

// sameTokens reports whether a is the JSON text b with white space between
// its tokens: compactEqual, where moreover no white space stands between
// two bytes of a number or literal (a is then JSON exactly when b is). b
// must be strict JSON (decodeStrict accepts it); a then is too, with the
// same values, members and nesting, and may be taken as validated.
func sameTokens(a, b []byte) bool {
	j := 0
	prev := byte('{') // the byte before the current one outside white space
	for i := 0; i < len(a); {
		c := a[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			k := i + 1
			for k < len(a) && (a[k] == ' ' || a[k] == '\t' || a[k] == '\n' || a[k] == '\r') {
				k++
			}
			if k < len(a) && inToken(prev) && inToken(a[k]) {
				return false
			}
			i = k
			continue
		case '"':
			n := stringLen(a[i:])
			if j+n > len(b) || !bytes.Equal(a[i:i+n], b[j:j+n]) {
				return false
			}
			i, j, prev = i+n, j+n, '"'
			continue
		}
		if j == len(b) || b[j] != c {
			return false
		}
		i, j, prev = i+1, j+1, c
	}
	return j == len(b)
}

// inToken reports whether c, outside a string and white space, is part of
// a number or a literal (true, false, null).
func inToken(c byte) bool {
	switch c {
	case '{', '}', '[', ']', ',', ':', '"':
		return false
	}
	return true
}

// skip validates one JSON value with the rules of value (strict strings,
// numbers, nesting depth, no repeated member), without building it.
func (p *jsonParser) skip(depth int) error {
	if depth > maxJSONDepth {
		return p.errorf("nested deeper than %d levels", maxJSONDepth)
	}
	p.space()
	if p.pos == len(p.data) {
		return p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.skipObject(depth)
	case c == '[':
		p.pos++
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return nil
		}
		for {
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			p.space()
			if p.pos == len(p.data) {
				return p.errorf("unterminated array")
			}
			switch p.data[p.pos] {
			case ',':
				p.pos++
			case ']':
				p.pos++
				return nil
			default:
				return p.errorf("expected ',' or ']'")
			}
		}
	case c == '"':
		_, _, err := p.strSpan()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, err := p.numberSpan()
		return err
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
				p.pos += len(lit)
				return nil
			}
		}
		return p.errorf("unexpected character %q", c)
	}
}

// skipObject is skip for an object. Repeated member names are found by
// comparing decoded names: linearly while an object is small (a receipt's
// largest has 23 members), through a set beyond, so that a hostile object
// with many members costs linear time.
func (p *jsonParser) skipObject(depth int) error {
	p.pos++ // '{'
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return nil
	}
	base := len(p.names)
	defer func() { p.names = p.names[:base] }()
	var set map[string]struct{}
	for {
		p.space()
		if p.pos == len(p.data) || p.data[p.pos] != '"' {
			return p.errorf("expected a member name")
		}
		raw, decoded, err := p.strSpan()
		if err != nil {
			return err
		}
		name := raw
		if decoded != nil {
			name = decoded
		}
		switch {
		case set != nil:
			if _, dup := set[string(name)]; dup {
				return p.errorf("duplicate member %q", name)
			}
			set[string(name)] = struct{}{}
		default:
			for _, seen := range p.names[base:] {
				if bytes.Equal(seen, name) {
					return p.errorf("duplicate member %q", name)
				}
			}
			p.names = append(p.names, name)
			if len(p.names)-base > 32 {
				set = make(map[string]struct{}, 64)
				for _, seen := range p.names[base:] {
					set[string(seen)] = struct{}{}
				}
			}
		}
		p.space()
		if p.pos == len(p.data) || p.data[p.pos] != ':' {
			return p.errorf("expected ':'")
		}
		p.pos++
		if err := p.skip(depth + 1); err != nil {
			return err
		}
		p.space()
		if p.pos == len(p.data) {
			return p.errorf("unterminated object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return nil
		default:
			return p.errorf("expected ',' or '}'")
		}
	}
}

// strSpan reads a string: raw is its bytes between the quotes; decoded is
// its value when it has escapes (nil otherwise, and then raw is the value).
func (p *jsonParser) strSpan() (raw, decoded []byte, err error) {
	p.pos++ // '"'
	start := p.pos
	if end, ok := plainString(p.data[start:]); ok {
		p.pos = start + end + 1
		return p.data[start : start+end], nil, nil
	}
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return p.data[start : p.pos-1], nil, nil
		case c == '\\':
			s, err := p.escapedStr(start)
			if err != nil {
				return nil, nil, err
			}
			return p.data[start : p.pos-1], []byte(s), nil
		case c < 0x20:
			return nil, nil, p.errorf("control character in string")
		}
		p.pos++
	}
	return nil, nil, p.errorf("unterminated string")
}

// plainString finds the closing quote of a string body b that has no
// escape and no control character, the common case, with the vectorised
// bytes.IndexByte and a word-at-a-time control check; false sends the
// caller to its byte-by-byte loop, which reports errors and escapes.
func plainString(b []byte) (end int, ok bool) {
	end = bytes.IndexByte(b, '"')
	if end < 0 {
		return 0, false
	}
	body := b[:end]
	if bytes.IndexByte(body, '\\') >= 0 || hasControl(body) {
		return 0, false
	}
	return end, true
}

// hasControl reports whether b has a byte below 0x20, eight bytes at a
// time: for a word x, (x - 0x20…20) & ^x & 0x80…80 is non-zero exactly when
// some byte of x is below 0x20 (the "has less than" bit trick; a byte ≥
// 0x80 has its top bit set in x and is masked by ^x).
func hasControl(b []byte) bool {
	const ones, highs = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-ones)&^x&highs != 0 {
			return true
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return true
		}
	}
	return false
}

// numberSpan is number without the allocation.
func (p *jsonParser) numberSpan() ([]byte, error) {
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
	return p.data[start:p.pos], nil
}
