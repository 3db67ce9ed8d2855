package jsontop

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

var names = []string{"id", "object", "account", "nested"}

var seeds = []string{
	`{"id":"x402-1","object":"settlement","account":"acct_0","nested":{"id":"inner","a":[1,"]",{"}":null}]}}`,
	` { "object" : "fiscal_event" , "id" : "fe-\u00e9\"q" , "n" : -1.5e+3 , "t" : true } `,
	`{"account":"a\\b","x":[],"y":{},"id":"\ud83d\ude00"}`,
	`{}`,
	`{"id":1,"object":null,"account":["a"]}`,
	`{"id":"a","id":"b"}`,
	`{"i\u0064":"escaped name"}`,
	`{"id":"a"`, `{"id" "a"}`, `{"id":"a",}`, `{"id":"a"} x`, `["id"]`, `{"id":"a` + "\n" + `"}`, ``,
	"{\"id\":\"\xff\"}",
	" null ", // encoding/json decodes it into a map (leaving it nil); not an object
}

// TestRaw reads the members of the seeds as encoding/json decodes them,
// and refuses what is not one object or names a member twice.
func TestRaw(t *testing.T) {
	got, err := Strings([]byte(seeds[1]), names...)
	if err != nil || got[0] != "fe-é\"q" || got[1] != "fiscal_event" || got[2] != "" || got[3] != "" {
		t.Errorf("Strings: %q %v", got, err)
	}
	raw, err := Raw([]byte(seeds[0]), names...)
	if err != nil || string(raw[3]) != `{"id":"inner","a":[1,"]",{"}":null}]}` || string(raw[0]) != `"x402-1"` {
		t.Errorf("Raw: %q %v", raw, err)
	}
	if _, err := Raw([]byte(seeds[5]), "id"); !errors.Is(err, ErrDuplicate) {
		t.Errorf("a repeated member: %v", err)
	}
	if got, err := Strings([]byte(seeds[6]), "id"); err != nil || got[0] != "escaped name" {
		t.Errorf("an escaped name: %q %v", got, err)
	}
	for _, bad := range seeds[7:14] {
		if _, err := Raw([]byte(bad), "id"); err == nil {
			t.Errorf("%q: accepted", bad)
		}
		if got, err := Strings([]byte(bad), names...); err == nil || len(got) != len(names) || got[0] != "" {
			t.Errorf("Strings(%q): %q %v, want %d empty strings and an error", bad, got, err, len(names))
		}
	}
}

func FuzzRawMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		raw, err := Raw(doc, names...) // never panics, whatever doc is
		var m map[string]json.RawMessage
		if json.Unmarshal(doc, &m) != nil {
			return // Raw may accept what encoding/json refuses (see doc.go)
		}
		if m == nil {
			// The JSON null, which encoding/json decodes into a map by
			// leaving it nil: not an object, so Raw must refuse it.
			if err == nil {
				t.Fatalf("%q: not an object, Raw accepts it", doc)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, ErrDuplicate) {
				t.Fatalf("%q: encoding/json accepts it, Raw: %v", doc, err)
			}
			return
		}
		for k, name := range names {
			want, present := m[name]
			if present != (raw[k] != nil) || present && !bytes.Equal(bytes.TrimSpace(want), raw[k]) {
				t.Fatalf("%q: member %q is %q, encoding/json has %q", doc, name, raw[k], want)
			}
			var ws string
			gs, ok := String(raw[k])
			isString := present && bytes.TrimSpace(want)[0] == '"'
			if wantOK := isString && json.Unmarshal(want, &ws) == nil; ok != wantOK || gs != ws {
				t.Fatalf("%q: string %q is %q %v, encoding/json %q %v", doc, name, gs, ok, ws, wantOK)
			}
		}
	})
}

func BenchmarkStrings(b *testing.B) {
	doc := bytes.Repeat([]byte(`{"k":"value \"quoted\"","n":[1,2,{"x":null}]},`), 100)
	doc = append(append([]byte(`{"id":"x402-1","object":"settlement","account":"acct_0","body":[`), doc[:len(doc)-1]...), "]}"...)
	b.Run("jsontop", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Strings(doc, "id", "object", "account"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var h struct{ ID, Object, Account string }
			if err := json.Unmarshal(doc, &h); err != nil {
				b.Fatal(err)
			}
		}
	})
}
