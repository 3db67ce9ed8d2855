package receipt

import "testing"

// BenchmarkVerify is the auditor's hot path: one receipt of a five-entry
// log, JWKS and log key parsed on every call as Verify does.
func BenchmarkVerify(b *testing.B) {
	s := newTamperSet(b)
	jwks := s.f.jwks(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(s.rs[1], jwks, s.f.log.vkey); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSign is the service's hot path: check, encode and sign claims.
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

// BenchmarkAssemble is the read path of GET /v1/receipts/{id}.
func BenchmarkAssemble(b *testing.B) {
	f := newFixture(b)
	f.issue(b, sampleClaims(0), sampleClaims(1), sampleClaims(2))
	c := sampleClaims(3)
	c.Log = LogRef{Origin: testOrigin, Index: f.log.size}
	jws, err := f.signer.Sign(c)
	if err != nil {
		b.Fatal(err)
	}
	index := f.log.append(b, []byte(jws))
	proof, cp := f.log.prove(b, index), f.log.checkpoint(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Assemble(jws, index, proof, cp); err != nil {
			b.Fatal(err)
		}
	}
}
