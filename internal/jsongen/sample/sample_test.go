package sample_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/jsongen"
	"github.com/fiscal402/fiscal402/internal/jsongen/jsonfill"
	"github.com/fiscal402/fiscal402/internal/jsongen/sample"
)

// rawJSON are MarshalJSON results: plain ones, ones encoding/json
// compacts or escapes, and ones it refuses.
var rawJSON = []string{`"1.5"`, `25.5`, `-0.5e+10`, `0`, `01`, `1.`, `-`, `"a<b"`, "\"\u2028\"", ` {"a" : [1, 2 ,"&"] } `,
	"null", "true", "[]", `{"x":"\xff"}`, `"\x01"`, `{`, ``, `"unterminated`, `1 2`, "\t\"tab\"\n", `"é"`}

// custom fills the types with unexported fields and the marshalers.
func custom(t reflect.Type, r *rand.Rand) (reflect.Value, bool) {
	switch t {
	case reflect.TypeFor[decimal.Decimal]():
		return reflect.ValueOf(decimal.New(r.Int64N(2_000_000)-1_000_000, int32(r.IntN(40)-20))), true
	case reflect.TypeFor[time.Time]():
		sec := r.Int64N(400_000_000_000) - 100_000_000_000 // years beyond 9999 fail MarshalJSON
		zones := []*time.Location{time.UTC, time.FixedZone("", 3600+1800), time.FixedZone("X", -7*3600)}
		return reflect.ValueOf(time.Unix(sec, r.Int64N(1e9)).In(zones[r.IntN(len(zones))])), true
	case reflect.TypeFor[json.RawMessage]():
		if r.IntN(5) == 0 {
			return reflect.ValueOf(json.RawMessage(nil)), true
		}
		return reflect.ValueOf(json.RawMessage(rawJSON[r.IntN(len(rawJSON))])), true
	case reflect.TypeFor[sample.Raw]():
		if r.IntN(20) == 0 {
			return reflect.ValueOf(sample.Raw{J: "fail"}), true
		}
		return reflect.ValueOf(sample.Raw{J: rawJSON[r.IntN(len(rawJSON))]}), true
	case reflect.TypeFor[sample.Text]():
		if r.IntN(20) == 0 {
			return reflect.ValueOf(sample.Text{S: "fail"}), true
		}
	}
	return reflect.Value{}, false
}

// same fails unless the generated encoder writes what json.Marshal
// writes for v, or fails where it fails, with the same message.
func same[T any](t testing.TB, enc func([]byte, *T) ([]byte, error), v *T) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := enc([]byte("prefix"), v)
	if (werr != nil) != (gerr != nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("error %v, json.Marshal's %v (value %+v)", gerr, werr, v)
	}
	if werr == nil && (!bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want)) {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

// TestMatchesMarshal: for random values of every sample type (every
// field, every escape, nil, empty and zero values, failing marshalers),
// the generated encoders write what json.Marshal writes.
func TestMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	for i := range 20000 {
		f := &jsonfill.Filler{R: r, Custom: custom, Zero: i % 8}
		var a sample.All
		f.Fill(reflect.ValueOf(&a).Elem())
		same(t, sample.AppendAll, &a)
		var o sample.OnlyOptional
		f.Fill(reflect.ValueOf(&o).Elem())
		same(t, sample.AppendOnlyOptional, &o)
		var in []sample.Inner
		f.Fill(reflect.ValueOf(&in).Elem())
		same(t, sample.AppendInners, &in)
		var m map[string]string
		f.Fill(reflect.ValueOf(&m).Elem())
		same(t, sample.AppendStrings, &m)
	}
	same(t, sample.AppendAll, &sample.All{})
	same(t, sample.AppendEmpty, &sample.Empty{})
	same(t, sample.AppendOnlyOptional, &sample.OnlyOptional{})
	same(t, sample.AppendInners, &[]sample.Inner{})
	same(t, sample.AppendStrings, &map[string]string{})
}

// FuzzMatchesMarshal fills the sample types from the fuzzer's bytes.
func FuzzMatchesMarshal(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := rand.New(&jsonfill.Source{Data: data})
		fl := &jsonfill.Filler{R: r, Custom: custom, Zero: 2}
		var a sample.All
		fl.Fill(reflect.ValueOf(&a).Elem())
		a.S = string(data) // raw bytes: any UTF-8, valid or not
		same(t, sample.AppendAll, &a)
	})
}

// TestString: the string escaper writes what json.Marshal writes for
// every byte, every escape class and mixtures of them.
func TestString(t *testing.T) {
	check := func(s string) {
		t.Helper()
		m := map[string]string{s: s}
		same(t, sample.AppendStrings, &m)
	}
	for c := range 256 {
		check(string([]byte{byte(c)}))
		check("a" + string([]byte{byte(c)}) + "é")
	}
	r := rand.New(rand.NewPCG(22, 3))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(jsonfill.Pieces[r.IntN(len(jsonfill.Pieces))])
		}
		check(b.String())
	}
}

// TestGenerated fails when the sample's encoder or bootstrap is not what
// the generator writes now: run go generate ./internal/jsongen/sample.
func TestGenerated(t *testing.T) {
	for _, tg := range jsongen.Targets() {
		if !strings.HasPrefix(tg.File, "internal/jsongen/sample/") {
			continue
		}
		enc, boot, err := jsongen.Generate(tg)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string][]byte{tg.File: enc, tg.Bootstrap: boot} {
			got, err := os.ReadFile(filepath.Join("../../..", name))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is stale (%v): go generate ./internal/jsongen/sample", name, err)
			}
		}
	}
}

// TestDecimal: decimals, written without shopspring's MarshalJSON on its
// default settings, are what it writes: zeros, signs, trailing zeros,
// leading zeros after the point, positive exponents, coefficients past
// 18 digits and exponents past ±40 (which it writes itself), and the
// package's settings changed (MarshalJSON again).
func TestDecimal(t *testing.T) {
	var ds []decimal.Decimal
	for _, c := range []int64{0, 1, -1, 5, -7, 10, 1200, -1200, 123456789, 999999999999999999, -999999999999999999, 1e17} {
		for _, e := range []int32{-41, -40, -20, -13, -12, -3, -2, -1, 0, 1, 2, 3, 40, 41} {
			ds = append(ds, decimal.New(c, e))
		}
	}
	ds = append(ds, decimal.Decimal{}, decimal.RequireFromString("1234567890123456789012.5"), decimal.RequireFromString("-0.000000000000000000001"),
		decimal.RequireFromString("-9223372036854775808"), decimal.RequireFromString("9223372036854775807"))
	check := func() {
		t.Helper()
		for _, d := range ds {
			same(t, sample.AppendAll, &sample.All{Dec: d, PDec: &d})
		}
	}
	check()
	for _, flag := range []*bool{&decimal.MarshalJSONWithoutQuotes, &decimal.TrimTrailingZeros, &decimal.UseScientificNotation} {
		*flag = !*flag
		check()
		*flag = !*flag
	}
}
