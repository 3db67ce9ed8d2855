package fiscal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// locateUnknown gives an unknown-member error its full JSON pointer.
// encoding/json reports an unknown member by its name only, which in a
// nested body ({"buyer":{"countyr":"DE"}}) does not say where it is; the
// body is walked along the Go type of v, matching member names as
// encoding/json does (exact tag first, then case-insensitively), and the
// first member the type does not have is the one it refused.
func locateUnknown(err error, body []byte, v any) error {
	fe, ok := err.(*Error)
	if !ok || fe.Code != CodeBadRequest || !strings.HasPrefix(fe.Detail, "unknown field ") {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	ptr, found := firstUnknown(dec, reflect.TypeOf(v), "")
	if !found {
		return err
	}
	c := *fe
	c.Field = ptr
	return &c
}

// firstUnknown reads one JSON value from dec as a value of type t and
// returns the pointer of the first object member t has no field for.
func firstUnknown(dec *json.Decoder, t reflect.Type, path string) (string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	d, isDelim := tok.(json.Delim)
	if !isDelim {
		return "", false
	}
	switch d {
	case '{':
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", false
			}
			key, _ := kt.(string)
			member := path + "/" + jsonPointerEscape(key)
			var ft reflect.Type
			switch {
			case t != nil && t.Kind() == reflect.Struct:
				f, ok := structField(t, key)
				if !ok {
					return member, true
				}
				ft = f
			case t != nil && t.Kind() == reflect.Map:
				ft = t.Elem()
			}
			if p, found := firstUnknown(dec, ft, member); found {
				return p, true
			}
		}
	case '[':
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if p, found := firstUnknown(dec, et, fmt.Sprintf("%s/%d", path, i)); found {
				return p, true
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return "", false
	}
	return "", false
}

// structField finds the field encoding/json would decode member name into:
// the exact JSON name first, then a case-insensitive match; fields of
// embedded structs are promoted.
func structField(t reflect.Type, name string) (reflect.Type, bool) {
	var fold reflect.Type
	var walk func(t reflect.Type) (reflect.Type, bool)
	walk = func(t reflect.Type) (reflect.Type, bool) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "-" {
				continue
			}
			if f.Anonymous && tag == "" {
				et := f.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					if ft, ok := walk(et); ok {
						return ft, true
					}
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			jn := tag
			if jn == "" {
				jn = f.Name
			}
			if jn == name {
				return f.Type, true
			}
			if fold == nil && strings.EqualFold(jn, name) {
				fold = f.Type
			}
		}
		return nil, false
	}
	if ft, ok := walk(t); ok {
		return ft, true
	}
	return fold, fold != nil
}
