package receipt

import "testing"

func BenchmarkVerify(b *testing.B) {
	f := newFixture(b)
	rs := f.issue(b, sampleClaims(0), sampleClaims(1), sampleClaims(2))
	jwks := f.jwks(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(rs[1], jwks, f.log.vkey); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	f := newFixture(b)
	c := sampleClaims(0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.signer.Sign(c); err != nil {
			b.Fatal(err)
		}
	}
}
