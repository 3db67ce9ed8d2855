package jsongen

import (
	"reflect"
	"strings"
	"testing"
)

type ptrText struct{}

func (*ptrText) MarshalText() ([]byte, error) { return nil, nil }

type ptrJSON struct{}

func (*ptrJSON) MarshalJSON() ([]byte, error) { return nil, nil }

type (
	withFloat  struct{ F float64 }
	withAny    struct{ I any }
	withString struct {
		N int `json:",string"`
	}
	withOmitzero struct {
		N int `json:",omitzero"`
	}
	withIntKeys struct{ M map[int]string }
	withPtrText struct{ T ptrText }
	withPtrJSON struct{ J []ptrJSON }
	withChan    struct{ C chan int }
)

// TestRefuses: what the generator cannot write as encoding/json does is
// an error naming the type, never a wrong encoder.
func TestRefuses(t *testing.T) {
	cases := map[string]reflect.Type{
		"kind float64":        reflect.TypeFor[withFloat](),
		"is an interface":     reflect.TypeFor[withAny](),
		"option \"string\"":   reflect.TypeFor[withString](),
		"option \"omitzero\"": reflect.TypeFor[withOmitzero](),
		"map keys":            reflect.TypeFor[withIntKeys](),
		"pointer only":        reflect.TypeFor[withPtrText](),
		"pointer only ":       reflect.TypeFor[withPtrJSON](),
		"kind chan":           reflect.TypeFor[withChan](),
	}
	for want, ty := range cases {
		_, _, err := Generate(Target{PkgPath: reflect.TypeFor[withAny]().PkgPath(), PkgName: "jsongen", Tag: "t", Roots: []Root{{Func: "f", Type: ty}}})
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(want)) {
			t.Errorf("%s: error %v, want one saying %q", ty, err, want)
		}
	}
}
