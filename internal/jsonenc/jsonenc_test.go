package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"
)

// TestStringMatchesEncodingJSON: every byte alone and between safe ones,
// the line separators, valid multi-byte runes and broken UTF-8 come out as
// json.Marshal writes them.
func TestStringMatchesEncodingJSON(t *testing.T) {
	in := []string{"", "plain", "\u2028\u2029", "é€😀", "\xff", "a\xe2\x82", "\xed\xa0\x80", "<a href=\"x\">&amp;</a>\\"}
	for c := range 256 {
		in = append(in, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	for _, s := range in {
		want, _ := json.Marshal(s)
		if got := String([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("String(%q) = %s, want %s", s, got[1:], want)
		}
	}
}

// FuzzString holds String to json.Marshal on any text.
func FuzzString(f *testing.F) {
	f.Add("a\x00<\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("String(%q) = %s, want %s", s, got, want)
		}
	})
}

type raw string

func (r raw) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// TestMarshaledMatchesEncodingJSON: what a MarshalJSON method returns is
// written as encoding/json writes it (compacted, HTML-escaped), and
// refused where encoding/json refuses it.
func TestMarshaledMatchesEncodingJSON(t *testing.T) {
	for _, r := range []raw{`"safe"`, `"<&>"`, `0`, `-1.5e+3`, `01`, `1.`, `{ "a" : [1, 2] }`, `"\u2028"`, `nope`, `{`} {
		want, wantErr := json.Marshal(r)
		got, err := Marshaled(nil, []byte(r))
		if (err != nil) != (wantErr != nil) || err == nil && !bytes.Equal(got, want) {
			t.Errorf("Marshaled(%s) = %s, %v; json.Marshal: %s, %v", r, got, err, want, wantErr)
		}
	}
}

// TestDecimalMatchesMarshalJSON: decimals of every shape the fast path
// takes, and ones past it, as shopspring's MarshalJSON writes them.
func TestDecimalMatchesMarshalJSON(t *testing.T) {
	for _, s := range []string{"0", "-0.00", "1", "10.50", "-0.0001", "123456789012345678", "1234567890123456789.5", "1e30", "1e-45", "0.000000000000000001"} {
		d := decimal.RequireFromString(s)
		want, _ := d.MarshalJSON()
		got, err := Decimal(nil, d)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Decimal(%s) = %s, %v, want %s", s, got, err, want)
		}
	}
	for _, d := range []decimal.Decimal{decimal.New(-7, 3), decimal.New(25, -1), decimal.New(0, 5)} {
		want, _ := d.MarshalJSON()
		if got, _ := Decimal(nil, d); !bytes.Equal(got, want) {
			t.Errorf("Decimal(%v) = %s, want %s", d, got, want)
		}
	}
}
