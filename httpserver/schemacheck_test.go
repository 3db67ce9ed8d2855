package httpserver_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A small structural checker of JSON values against the OpenAPI document's
// own schemas: types, enums, required members, and (strictly, to catch
// drift between the Go types and the document) no member that the schema
// does not declare. It understands the subset the document uses: $ref,
// allOf, oneOf, anyOf, if/then, const, type, enum, pattern, format (date,
// date-time), minLength, maxLength, properties, required, maxProperties,
// items, additionalProperties.

type openAPIDoc map[string]any

func (d openAPIDoc) resolve(ref string) map[string]any {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if !ok {
		return nil
	}
	s, _ := d["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	return s
}

// responseSchema returns the schema of a documented response.
func (d openAPIDoc) responseSchema(method, path string, status int, mediaType string) (map[string]any, error) {
	item, _ := d["paths"].(map[string]any)[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return nil, fmt.Errorf("no operation %s %s", method, path)
	}
	resp, _ := op["responses"].(map[string]any)[fmt.Sprint(status)].(map[string]any)
	if ref, ok := resp["$ref"].(string); ok {
		name, _ := strings.CutPrefix(ref, "#/components/responses/")
		resp, _ = d["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
	}
	if resp == nil {
		return nil, fmt.Errorf("%s %s documents no %d response", method, path, status)
	}
	media, _ := resp["content"].(map[string]any)[mediaType].(map[string]any)
	if media == nil {
		return nil, fmt.Errorf("%s %s %d documents no %s body", method, path, status, mediaType)
	}
	s, _ := media["schema"].(map[string]any)
	return s, nil
}

// check returns every mismatch between v and schema, with JSON pointers.
func (d openAPIDoc) check(schema map[string]any, v any, at string) []string {
	if schema == nil {
		return []string{at + ": no schema"}
	}
	if ref, ok := schema["$ref"].(string); ok {
		r := d.resolve(ref)
		if r == nil {
			return []string{at + ": unresolvable " + ref}
		}
		return d.check(r, v, at)
	}
	var errs []string
	if all, ok := schema["allOf"].([]any); ok {
		for _, s := range all {
			errs = append(errs, d.check(s.(map[string]any), v, at)...)
		}
	}
	if one, ok := schema["oneOf"].([]any); ok {
		matched := 0
		for _, s := range one {
			if len(d.check(s.(map[string]any), v, at)) == 0 {
				matched++
			}
		}
		if matched != 1 {
			errs = append(errs, fmt.Sprintf("%s: matches %d of oneOf", at, matched))
		}
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		matched := false
		for _, s := range alts {
			matched = matched || len(d.check(s.(map[string]any), v, at)) == 0
		}
		if !matched {
			errs = append(errs, fmt.Sprintf("%s: %v matches none of anyOf", at, v))
		}
	}
	if cond, ok := schema["if"].(map[string]any); ok && len(d.check(cond, v, at)) == 0 {
		if then, ok := schema["then"].(map[string]any); ok {
			errs = append(errs, d.check(then, v, at)...)
		}
	}
	if c, ok := schema["const"]; ok && c != v {
		errs = append(errs, fmt.Sprintf("%s: %v is not %v", at, v, c))
	}
	if str, ok := v.(string); ok {
		if n, ok := schemaInt(schema["minLength"]); ok && utf8.RuneCountInString(str) < n {
			errs = append(errs, fmt.Sprintf("%s: %q is shorter than %d", at, str, n))
		}
		if n, ok := schemaInt(schema["maxLength"]); ok && utf8.RuneCountInString(str) > n {
			errs = append(errs, fmt.Sprintf("%s: %q is longer than %d", at, str, n))
		}
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			errs = append(errs, fmt.Sprintf("%s: %q does not match %s", at, str, p))
		}
		switch schema["format"] {
		case "date":
			if _, err := time.Parse(time.DateOnly, str); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %q is not a date", at, str))
			}
		case "date-time":
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %q is not a date-time", at, str))
			}
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		errs = append(errs, fmt.Sprintf("%s: %v not in enum %v", at, v, enum))
	}
	typ, _ := schema["type"].(string)
	switch typ {
	case "":
		// Without a type, an object's members are still checked when the
		// schema names them (an if/then's required and properties).
		if obj, ok := v.(map[string]any); ok {
			for _, r := range asStrings(schema["required"]) {
				if _, ok := obj[r]; !ok {
					errs = append(errs, at+"/"+r+": required member missing")
				}
			}
			if props, ok := schema["properties"].(map[string]any); ok {
				for k, ps := range props {
					if val, ok := obj[k]; ok {
						errs = append(errs, d.check(ps.(map[string]any), val, at+"/"+k)...)
					}
				}
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return append(errs, fmt.Sprintf("%s: %T is not an object", at, v))
		}
		props, _ := schema["properties"].(map[string]any)
		if n, ok := schemaInt(schema["maxProperties"]); ok && len(obj) > n {
			errs = append(errs, fmt.Sprintf("%s: more than %d members", at, n))
		}
		for _, r := range asStrings(schema["required"]) {
			if _, ok := obj[r]; !ok {
				errs = append(errs, at+"/"+r+": required member missing")
			}
		}
		addl, _ := schema["additionalProperties"].(map[string]any)
		for k, val := range obj {
			switch ps, ok := props[k].(map[string]any); {
			case ok:
				errs = append(errs, d.check(ps, val, at+"/"+k)...)
			case addl != nil:
				errs = append(errs, d.check(addl, val, at+"/"+k)...)
			default:
				errs = append(errs, at+"/"+k+": member not in the schema")
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return append(errs, fmt.Sprintf("%s: %T is not an array", at, v))
		}
		items, _ := schema["items"].(map[string]any)
		for i, el := range arr {
			errs = append(errs, d.check(items, el, fmt.Sprintf("%s/%d", at, i))...)
		}
	case "string":
		if _, ok := v.(string); !ok {
			errs = append(errs, fmt.Sprintf("%s: %T is not a string", at, v))
		}
	case "integer":
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			errs = append(errs, fmt.Sprintf("%s: %v is not an integer", at, v))
		}
	case "number":
		if _, ok := v.(float64); !ok {
			errs = append(errs, fmt.Sprintf("%s: %T is not a number", at, v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			errs = append(errs, fmt.Sprintf("%s: %T is not a boolean", at, v))
		}
	case "null":
		if v != nil {
			errs = append(errs, fmt.Sprintf("%s: %v is not null", at, v))
		}
	default:
		errs = append(errs, at+": unknown type "+typ)
	}
	return errs
}

// schemaInt reads a schema keyword's integer, as the document decodes
// (float64) or as a schema built in Go holds it (int).
func schemaInt(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), true
	case int:
		return n, true
	}
	return 0, false
}

func asStrings(v any) []string {
	var out []string
	switch vs := v.(type) {
	case []any:
		for _, s := range vs {
			out = append(out, s.(string))
		}
	case []string:
		out = vs
	}
	return out
}

// assertDocumented checks a real response body against the document.
func assertDocumented(t *testing.T, doc openAPIDoc, method, path string, r response) {
	t.Helper()
	mediaType := strings.TrimSpace(strings.Split(r.header.Get("Content-Type"), ";")[0])
	schema, err := doc.responseSchema(method, path, r.status, mediaType)
	if err != nil {
		t.Error(err)
		return
	}
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Errorf("%s %s: body is not JSON: %v", method, path, err)
		return
	}
	for _, e := range doc.check(schema, v, "") {
		t.Errorf("%s %s %d: %s", method, path, r.status, e)
	}
}
