package receipt

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// concealThenSeal is what ConcealSeal replaces: Conceal, then Seal of the
// public claims.
func concealThenSeal(c Claims, seed byte) ([]byte, []Opening, error) {
	public, openings, err := Conceal(c, testRand(seed))
	if err != nil {
		return nil, nil, err
	}
	leaf, err := Seal(public)
	if err != nil {
		return nil, nil, err
	}
	return leaf, openings, nil
}

// sameAsConcealThenSeal fails the test unless ConcealSeal answers c as
// Conceal then Seal do, and reports whether they accepted it.
func sameAsConcealThenSeal(t *testing.T, c Claims, seed byte) bool {
	t.Helper()
	wantLeaf, wantOpenings, wantErr := concealThenSeal(c, seed)
	leaf, openings, err := ConcealSeal(c, testRand(seed))
	if !reflect.DeepEqual(err, wantErr) {
		j, _ := json.Marshal(&c)
		t.Fatalf("errors differ: ConcealSeal %v, Conceal+Seal %v\nclaims %s", err, wantErr, j)
	}
	if !bytes.Equal(leaf, wantLeaf) || !reflect.DeepEqual(openings, wantOpenings) {
		t.Fatalf("leaf or openings differ:\n got %s\nwant %s", leaf, wantLeaf)
	}
	// ConcealSealAppend answers the same, after whatever dst holds, in
	// dst's array when it has the room.
	prefix := []byte("kept")
	dst := append(make([]byte, 0, len(prefix)+len(wantLeaf)+int(seed)%2), prefix...)
	out, openings, err := ConcealSealAppend(dst, c, testRand(seed))
	if !reflect.DeepEqual(err, wantErr) {
		t.Fatalf("errors differ: ConcealSealAppend %v, Conceal+Seal %v", err, wantErr)
	}
	if err == nil && (!bytes.Equal(out[:len(prefix)], prefix) || !bytes.Equal(out[len(prefix):], wantLeaf) || &out[0] != &dst[0]) ||
		err != nil && out != nil || !reflect.DeepEqual(openings, wantOpenings) {
		t.Fatalf("ConcealSealAppend: prefix, leaf, array or openings differ:\n got %s\nwant %s%s", out, prefix, wantLeaf)
	}
	return err == nil
}

// oddStrings are values that break one format rule or another.
var oddStrings = []string{"", "x", "\xff", "é", "<&>", "0", "-1", "1.5", "1e3", "0x", "0xAB", "2026-13-01", "DE", "de",
	"NL123456789B01", "0x" + string(bytes.Repeat([]byte("ab"), 32)), "12.345678901234", "USDC", "EUR", "\u2028", " "}

// spoil sets one string field of c, chosen at random anywhere in the
// claims (nested structs, slices, pointers), to an odd value, or clears a
// pointer.
func spoil(r *rand.Rand, c *Claims) {
	var strs []reflect.Value
	var ptrs []reflect.Value
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			if v.CanSet() {
				strs = append(strs, v)
			}
		case reflect.Pointer:
			if !v.IsNil() {
				ptrs = append(ptrs, v)
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(c).Elem())
	if len(ptrs) > 0 && r.IntN(8) == 0 {
		p := ptrs[r.IntN(len(ptrs))]
		if p.CanSet() {
			p.Set(reflect.Zero(p.Type()))
			return
		}
	}
	if len(strs) > 0 {
		strs[r.IntN(len(strs))].SetString(oddStrings[r.IntN(len(oddStrings))])
	}
}

// deepCopy copies claims through their JSON, so that spoiling a copy
// leaves the sample (its slices and pointers) alone.
func deepCopy(t *testing.T, c Claims) Claims {
	t.Helper()
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	var out Claims
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConcealSealMatches: ConcealSeal answers as Conceal then Seal for the
// sample claims of every shape and for 20,000 variants with one to three
// fields spoiled, accepted and rejected.
func TestConcealSealMatches(t *testing.T) {
	samples := []Claims{asV4(sampleClaimsV3Clear(1)), asV4(sampleClaimsV3B2BClear(2)), asV4(sampleClaimsV3UKClear(3)),
		asV4(pendingClaimsV3Clear(4)), sampleClaimsV3Clear(5)}
	for i, c := range samples {
		if !sameAsConcealThenSeal(t, c, byte(i)) && c.Spec == SpecV4 {
			t.Fatalf("sample %d rejected", i)
		}
	}
	r := rand.New(rand.NewPCG(22, 4))
	accepted, rejected := 0, 0
	for i := range 20000 {
		c := deepCopy(t, samples[r.IntN(len(samples))])
		for range 1 + r.IntN(3) {
			spoil(r, &c)
		}
		if sameAsConcealThenSeal(t, c, byte(i)) {
			accepted++
		} else {
			rejected++
		}
	}
	if accepted < 1000 || rejected < 1000 {
		t.Fatalf("%d accepted, %d rejected: the comparison needs both", accepted, rejected)
	}
	t.Logf("%d accepted, %d rejected", accepted, rejected)
}

// FuzzConcealSeal: for any claims encoding/json reads, ConcealSeal
// answers as Conceal then Seal.
func FuzzConcealSeal(f *testing.F) {
	for _, c := range []Claims{asV4(sampleClaimsV3Clear(1)), asV4(sampleClaimsV3B2BClear(2)), asV4(sampleClaimsV3UKClear(3)), asV4(pendingClaimsV3Clear(4))} {
		b, _ := json.Marshal(&c)
		f.Add(b, byte(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed byte) {
		var c Claims
		if json.Unmarshal(data, &c) != nil {
			return
		}
		sameAsConcealThenSeal(t, c, seed)
	})
}

func BenchmarkConcealSeal(b *testing.B) {
	c := asV4(sampleClaimsV3Clear(1))
	b.Run("Conceal+Seal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			public, _, err := Conceal(c, testRand(1))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Seal(public); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ConcealSeal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := ConcealSeal(c, testRand(1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ConcealSealAppend", func(b *testing.B) { // into one buffer, as the engine's pool gives it
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			out, _, err := ConcealSealAppend(buf[:0], c, testRand(1))
			if err != nil {
				b.Fatal(err)
			}
			buf = out
		}
	})
}
