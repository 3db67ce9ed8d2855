package jsongen

import (
	"reflect"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/jsongen/sample"
	"github.com/fiscal402/fiscal402/receipt"
)

// Targets are the encoders of this module, written by cmd/jsongen and
// held to their sources by the tests of their packages.
func Targets() []Target {
	return []Target{
		{
			File: "fiscal/json_gen.go", Bootstrap: "fiscal/json_bootstrap_gen.go",
			PkgPath: "github.com/fiscal402/fiscal402/fiscal", PkgName: "fiscal", Tag: "jsongen_bootstrap",
			Roots: []Root{
				{Func: "appendRecordJSON", Type: reflect.TypeFor[fiscal.Record]()},
				{Func: "appendEventJSON", Type: reflect.TypeFor[fiscal.Event]()},
				{Func: "appendOpeningsJSON", Type: reflect.TypeFor[[]receipt.Opening]()},
			},
		},
		{
			File: "internal/jsongen/sample/sample_gen.go", Bootstrap: "internal/jsongen/sample/sample_bootstrap_gen.go",
			PkgPath: "github.com/fiscal402/fiscal402/internal/jsongen/sample", PkgName: "sample", Tag: "jsongen_bootstrap",
			Roots: []Root{
				{Func: "AppendAll", Type: reflect.TypeFor[sample.All]()},
				{Func: "AppendEmpty", Type: reflect.TypeFor[sample.Empty]()},
				{Func: "AppendOnlyOptional", Type: reflect.TypeFor[sample.OnlyOptional]()},
				{Func: "AppendInners", Type: reflect.TypeFor[[]sample.Inner]()},
				{Func: "AppendStrings", Type: reflect.TypeFor[map[string]string]()},
			},
		},
	}
}
