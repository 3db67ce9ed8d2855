package strictjson

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

type inner struct {
	Country string `json:"country"`
	Items   []item `json:"items,omitempty"`
}

type item struct {
	Kind string `json:"kind"`
}

type target struct {
	Amount string            `json:"amountUsdc"`
	Name   string            `json:"name,omitempty"`
	Buyer  inner             `json:"buyer"`
	Extra  map[string]string `json:"extra,omitempty"`
	Flag   bool              `json:"flag,omitempty"`
}

func TestDecodeAccepts(t *testing.T) {
	var v target
	body := `{"amountUsdc":"1.50","name":"Zo\u00eb \ud83d\ude80","buyer":{"country":"DE","items":[{"kind":"a"},{"kind":"b"}]},"extra":{"Any":"x","any":"y"},"flag":true}`
	if err := Decode([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.Amount != "1.50" || v.Name != "Zoë 🚀" || v.Buyer.Country != "DE" || len(v.Buyer.Items) != 2 || v.Extra["Any"] != "x" || !v.Flag {
		t.Fatalf("decoded %+v", v)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct{ body, field, detail string }{
		{``, "", "empty"},
		{`[1]`, "", "must be a JSON object"},
		{`"x"`, "", "must be a JSON object"},
		{`{"amountUsdc":"1","amountUsdc":"2"}`, "/amountUsdc", "more than once"},
		{`{"buyer":{"country":"DE","country":"FR"}}`, "/buyer/country", "more than once"},
		{`{"amountUsdc":"1","amount\u0055sdc":"2"}`, "/amountUsdc", "more than once"},
		{`{"AmountUsdc":"1"}`, "/AmountUsdc", "unknown field"},
		{`{"buyer":{"Country":"DE"}}`, "/buyer/Country", "unknown field"},
		{`{"buyer":{"items":[{"kind":"a"},{"knd":"b"}]}}`, "/buyer/items/1/knd", "unknown field"},
		{`{"a/b~c":1}`, "/a~1b~0c", "unknown field"},
		{`{"name":"\ud800"}`, "/name", "lone UTF-16 surrogate"},
		{`{"name":"x\udc00y"}`, "/name", "lone UTF-16 surrogate"},
		{`{"name":"\ud800\u0041"}`, "/name", "lone UTF-16 surrogate"},
		{`{"amountUsdc":1.5}`, "/amountUsdc", "not a JSON number"},
		{`{"buyer":"DE"}`, "/buyer", "must be a JSON object"},
		{`{"amountUsdc":"1"} {}`, "", "after the JSON object"},
		{`{"amountUsdc":"1",}`, "", "not valid JSON"},
		{`{"amountUsdc":"1"`, "", "not valid JSON"},
		{`{"extra":{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, "/extra/a/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", "nested more than"},
		{"{\"name\":\"a\x01\"}", "/name", "not valid JSON"},
		{"{\"name\":\"\xff\"}", "", "UTF-8"},
		{`{"flag":tru}`, "/flag", "not valid JSON"},
		{`{"amountUsdc":01}`, "/amountUsdc", "not valid JSON"},
	} {
		var v target
		err := Decode([]byte(tc.body), &v)
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want *Error", tc.body, err)
			continue
		}
		if se.Field != tc.field || !strings.Contains(se.Detail, tc.detail) {
			t.Errorf("%.60s: got field %q detail %q; want field %q detail containing %q", tc.body, se.Field, se.Detail, tc.field, tc.detail)
		}
	}
}

// TestDeepNestingIsCheap: a body under the 64 KiB request limit made of
// brackets allocates far less than its size times a small factor (the
// previous decoder grew with the square of the depth: about 1 GB).
func TestDeepNestingIsCheap(t *testing.T) {
	body := []byte(strings.Repeat("[", 32000) + strings.Repeat("]", 32000))
	obj := []byte(`{"extra":{"a":` + strings.Repeat("[", 32000) + strings.Repeat("]", 32000) + `}}`)
	for _, b := range [][]byte{body, obj} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var v target
		if err := Decode(b, &v); err == nil {
			t.Fatal("accepted")
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(4*len(b)) {
			t.Errorf("decoding %d bytes allocated %d bytes", len(b), alloc)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"amountUsdc":"1.50","buyer":{"country":"DE"}}`))
	f.Add([]byte(`{"name":"\ud83d\ude80"}`))
	f.Add([]byte(`{"extra":{"a":"b"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v target
		err := Decode(data, &v)
		if err == nil {
			return
		}
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("error %v is not *Error", err)
		}
	})
}

func TestDecodeOpen(t *testing.T) {
	var v target
	if err := DecodeOpen([]byte(`{"amountUsdc":"1","future":{"deep":[1,{"x":"\ud83d\ude80"}]},"buyer":{"country":"DE","new":true}}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Amount != "1" || v.Buyer.Country != "DE" {
		t.Fatalf("%+v", v)
	}
	for _, body := range []string{`{"future":1,"future":2}`, `{"future":"\udc00"}`, `{"amountUsdc":1}`} {
		if err := DecodeOpen([]byte(body), &v); err == nil {
			t.Errorf("DecodeOpen(%s) accepted", body)
		}
	}
}

type embedding struct {
	target
	Extra2 string `json:"extra2,omitempty"`
}

func TestTypeErrorInEmbeddedStruct(t *testing.T) {
	var v embedding
	err := Decode([]byte(`{"amountUsdc":1.5}`), &v)
	var se *Error
	if !errors.As(err, &se) || se.Field != "/amountUsdc" {
		t.Fatalf("err = %v", err)
	}
	err = Decode([]byte(`{"buyer":{"country":5}}`), &v)
	if !errors.As(err, &se) || se.Field != "/buyer/country" {
		t.Fatalf("err = %v", err)
	}
}

// TestTypeErrorInArrayNamesTheElement: a value of the wrong type inside an
// array is named by a JSON pointer that resolves in the body: with the
// element's index, not encoding/json's index-free path.
func TestTypeErrorInArrayNamesTheElement(t *testing.T) {
	for _, tc := range []struct{ body, field string }{
		{`{"buyer":{"items":[{"kind":"a"},{"kind":5}]}}`, "/buyer/items/1/kind"},
		{`{"buyer":{"items":[{"kind":"a"},"b"]}}`, "/buyer/items/1"},
		{`{"buyer":{"items":[{"kind":[]}]}}`, "/buyer/items/0/kind"},
		{`{"buyer":{"items":{"kind":"a"}}}`, "/buyer/items"},
		{`{"extra":{"a":"x","b":true}}`, "/extra/b"},
		{`{"name":"x", "buyer": {"country": "DE", "items": [ {"kind": "a"} , {"kind" : 12.5} ]}}`, "/buyer/items/1/kind"},
	} {
		var v target
		err := Decode([]byte(tc.body), &v)
		var se *Error
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("%s: err %v, want field %s", tc.body, err, tc.field)
		}
	}
}
