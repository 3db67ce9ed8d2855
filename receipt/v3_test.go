package receipt

import (
	"reflect"
	"testing"
)

// TestV3RoundTrip issues SpecV3 receipts as the engine will: conceal the
// clear claims, sign before the log position is known, append, assemble.
// Verify must return the public claims with the index of the proof, and
// Reveal with the openings must give the clear claims back.
func TestV3RoundTrip(t *testing.T) {
	f := newFixture(t)
	clear := []Claims{sampleClaimsV3Clear(0), sampleClaimsV3B2BClear(1), sampleClaimsV3UKClear(2), pendingClaimsV3Clear(3)}
	var public []Claims
	var openings [][]Opening
	for i, c := range clear {
		p, o := conceal(t, c, byte(10+i))
		public, openings = append(public, p), append(openings, o)
	}
	rs := f.issue(t, public...)
	v, err := NewVerifier(f.jwks(t), f.log.vkey)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		got, err := Verify(r, f.jwks(t), f.log.vkey)
		if err != nil {
			t.Fatalf("receipt %d: %v\n%s", i, err, r)
		}
		want := public[i]
		want.Log = LogRef{Origin: testOrigin, Index: int64(i)}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("receipt %d: verified claims differ from the signed ones:\n got %+v\nwant %+v", i, *got, want)
		}
		revealed, err := v.Verify(r, openings[i]...)
		if err != nil {
			t.Fatalf("receipt %d with openings: %v", i, err)
		}
		wantClear := cloneClaims(&clear[i])
		wantClear.Commitments = public[i].Commitments
		wantClear.Log = want.Log
		if !reflect.DeepEqual(*revealed, wantClear) {
			t.Errorf("receipt %d: revealed claims differ from the clear ones:\n got %+v\nwant %+v", i, *revealed, wantClear)
		}
	}
}
