package receipt

import (
	"reflect"
	"testing"
)

// TestV4RoundTrip issues SpecV4 receipts as the engine does: conceal the
// clear claims, seal them before the log position is known, log the
// payload, cosign the checkpoint with the receipt key, assemble. Verify
// must return the public claims with the index of the proof, and the
// openings must reveal the clear claims.
func TestV4RoundTrip(t *testing.T) {
	f := newFixture(t)
	clear := []Claims{asV4(sampleClaimsV3Clear(0)), asV4(sampleClaimsV3B2BClear(1)), asV4(sampleClaimsV3UKClear(2)), asV4(pendingClaimsV3Clear(3))}
	var public []Claims
	var openings [][]Opening
	for i, c := range clear {
		p, o := conceal(t, c, byte(10+i))
		public, openings = append(public, p), append(openings, o)
	}
	rs := f.issueV4(t, public...)
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
			t.Errorf("receipt %d: verified claims differ from the sealed ones:\n got %+v\nwant %+v", i, *got, want)
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
