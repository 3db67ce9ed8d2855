package receipt

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// encodeCases are claims of every shape the tests use, plus strings that
// need escaping, in the Go view and in the 3.0.0 signed form.
func encodeCases(t testing.TB) []Claims {
	var cs []Claims
	for _, c := range []Claims{sampleClaims(0), sampleClaimsV2(1), pendingClaims(2), sandboxClaims(3),
		sampleClaimsV3Clear(4), sampleClaimsV3B2BClear(5), sampleClaimsV3UKClear(6), pendingClaimsV3Clear(7)} {
		cs = append(cs, c)
		if c.Spec == SpecV3 {
			public, _ := conceal(t, c, 1)
			cs = append(cs, public)
		}
	}
	odd := sampleClaimsV3Clear(8)
	odd.Seller.LegalName = "Smith & Sons <Ltd> \"quoted\" \\ back\nline\ttab\u2028\u2029 é \x01 \xff"
	odd.Classification.Reasons = []string{"<a>", ""}
	odd.Commitments = map[string]string{"/b&": "x", "/a<": "\xfe", "": ""}
	odd.Buyer.LocationEvidence = append(odd.Buyer.LocationEvidence, LocationEvidence{})
	return append(cs, odd)
}

// TestEncodeMatchesMarshal: appendClaims and appendClaimsV3 write what
// json.Marshal writes.
func TestEncodeMatchesMarshal(t *testing.T) {
	for i, c := range encodeCases(t) {
		want, _ := json.Marshal(&c)
		if got := appendClaims(nil, &c); !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
		w := toV3(&c)
		want, _ = json.Marshal(&w)
		if got := appendClaimsV3(nil, &w); !bytes.Equal(got, want) {
			t.Errorf("case %d v3:\n got %s\nwant %s", i, got, want)
		}
	}
}

// FuzzEncodeClaims: whatever claims encoding/json reads from the input,
// the hand-written encoders write them as json.Marshal does.
func FuzzEncodeClaims(f *testing.F) {
	for _, c := range encodeCases(f) {
		b, _ := json.Marshal(&c)
		f.Add(b)
		w := toV3(&c)
		b, _ = json.Marshal(&w)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Claims
		if json.Unmarshal(data, &c) == nil {
			want, err := json.Marshal(&c)
			if got := appendClaims(nil, &c); err == nil && !bytes.Equal(got, want) {
				t.Fatalf("appendClaims:\n got %s\nwant %s", got, want)
			}
		}
		var w claimsV3
		if json.Unmarshal(data, &w) == nil {
			want, err := json.Marshal(&w)
			if got := appendClaimsV3(nil, &w); err == nil && !bytes.Equal(got, want) {
				t.Fatalf("appendClaimsV3:\n got %s\nwant %s", got, want)
			}
		}
	})
}

// TestAppendJSONString: appendJSONString writes what json.Marshal writes
// for every byte, every escape class and random mixtures of them
// (FuzzEncodeClaims fuzzes it inside claims).
func TestAppendJSONString(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
	for c := range 256 {
		check(string([]byte{byte(c)}))
		check("a" + string([]byte{byte(c)}) + "é")
	}
	pieces := []string{"", "a", "Zz09", "\"", "\\", "<", ">", "&", "\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t",
		"é", "€", "😀", "\u2028", "\u2029", "\u2027", "\u202a", "\xff", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\ufffd", "—"}
	r := rand.New(rand.NewPCG(22, 3))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		check(b.String())
	}
}
