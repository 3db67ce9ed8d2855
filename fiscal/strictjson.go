package fiscal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// locateUnknownField points e at the unknown member's full path when
// decodeErr is encoding/json's unknown-field error.
func locateUnknownField(e *Error, decodeErr error, body []byte, v any) *Error {
	if !strings.HasPrefix(decodeErr.Error(), "json: unknown field ") {
		return e
	}
	if p, ok := unknownFieldPointer(body, reflect.TypeOf(v)); ok {
		e.Field = p
	}
	return e
}

// unknownFieldPointer finds the JSON pointer of the first member of body
// that the Go type t has no field for. encoding/json reports an unknown
// field by its name only ("json: unknown field \"amount\""), which names the
// wrong place in a nested request ({"payment":{"amount":...}} is
// /payment/amount, not /amount). Member names match fields as encoding/json
// matches them: exactly, else case-insensitively.
func unknownFieldPointer(body []byte, t reflect.Type) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	p, found, _ := findUnknown(dec, t, "")
	return p, found
}

func findUnknown(dec *json.Decoder, t reflect.Type, path string) (string, bool, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return "", false, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return "", false, nil
	}
	switch d {
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", false, err
			}
			key, _ := kt.(string)
			member := path + "/" + jsonPointerEscape(key)
			var next reflect.Type
			switch {
			case fields != nil:
				ft, ok := lookupField(fields, key)
				if !ok {
					return member, true, nil
				}
				next = ft
			case t != nil && t.Kind() == reflect.Map:
				next = t.Elem()
			}
			if p, found, err := findUnknown(dec, next, member); found || err != nil {
				return p, found, err
			}
		}
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if p, found, err := findUnknown(dec, elem, fmt.Sprintf("%s/%d", path, i)); found || err != nil {
				return p, found, err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return "", false, err
}

// jsonFields maps the JSON member names of a struct's fields (embedded
// structs promoted) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
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
				for k, v := range jsonFields(ft) {
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

func lookupField(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if t, ok := fields[key]; ok {
		return t, true
	}
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}
