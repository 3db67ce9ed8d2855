package jsongen

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// field is a member of a struct's JSON object as encoding/json sees it.
type field struct {
	name      string // the member name, unescaped
	tagged    bool   // the name came from a json tag
	index     []int  // the path of Go fields from the outer struct
	typ       reflect.Type
	omitEmpty bool
}

// structFields lists the members of t's JSON object in the order
// encoding/json writes them, by the rules of its typeFields: exported
// fields and the fields of embedded structs (through pointers too), a
// name from the json tag when it is valid, the Go rules of embedding with
// tagged names dominating untagged ones at the same depth, and names that
// still collide dropped. Tag options it does not implement (string,
// omitzero) are an error: the generator refuses what it cannot write
// exactly.
func structFields(t reflect.Type) ([]field, error) {
	type queued struct {
		typ   reflect.Type
		index []int
	}
	current, next := []queued{}, []queued{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []field
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := range q.typ.NumField() {
				sf := q.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validName(name) {
					name = ""
				}
				omitEmpty := false
				for o := range strings.SplitSeq(opts, ",") {
					switch o {
					case "", "omitempty":
						omitEmpty = omitEmpty || o == "omitempty"
					case "string", "omitzero":
						return nil, fmt.Errorf("%s.%s: the json tag option %q is not supported", q.typ, sf.Name, o)
					}
				}
				index := append(slices.Clone(q.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{name: name, tagged: name != "", index: index, typ: sf.Type, omitEmpty: omitEmpty}
					if f.name == "" {
						f.name = sf.Name
					}
					fields = append(fields, f)
					if count[q.typ] > 1 {
						// Embedded twice at this depth: a duplicate, so
						// that the name is dropped below.
						fields = append(fields, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, queued{typ: ft, index: index})
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		// The first of a name dominates unless the second is as deep and
		// as tagged: then neither is written.
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			out = append(out, fields[i])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out, nil
}

// validName is encoding/json's isValidTag: letters, digits and the
// punctuation it allows.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
