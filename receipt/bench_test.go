package receipt

import (
	"crypto/ed25519"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// benchReceipts is a five-entry log holding one receipt of each version the
// benchmarks verify: v1 at index 1, v2 at 2, v3 at 3.
type benchReceipts struct {
	f              *fixture
	jwks           []byte
	v1, v2, v3, v4 []byte
	openings       []Opening
}

// newBenchReceipts logs the five receipts, then a 4.0.0 receipt at index
// 5 under a checkpoint the receipt key cosigns.
func newBenchReceipts(b *testing.B) *benchReceipts {
	f := newFixture(b)
	pub, openings := conceal(b, sampleClaimsV3Clear(3), 3)
	rs := f.issue(b, sampleClaims(0), sampleClaims(1), sampleClaimsV2(2), pub, sampleClaims(4))
	pub4, _ := conceal(b, asV4(sampleClaimsV3Clear(5)), 5)
	v4 := f.issueV4(b, pub4)[0]
	return &benchReceipts{f: f, jwks: f.jwks(b), v1: rs[1], v2: rs[2], v3: rs[3], v4: v4, openings: openings}
}

// benchVerify times the package-level Verify of the receipt pick chooses:
// the key set and the log key are parsed on every call.
func benchVerify(b *testing.B, pick func(*benchReceipts) []byte) {
	r := newBenchReceipts(b)
	doc := pick(r)
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := Verify(doc, r.jwks, r.f.log.vkey); err != nil {
			b.Fatal(err)
		}
	}
}

// benchVerifier times a Verifier made once (as an auditor checking many
// receipts uses one) on the receipt pick chooses, with its openings when
// openings is set.
func benchVerifier(b *testing.B, pick func(*benchReceipts) []byte, openings bool) {
	r := newBenchReceipts(b)
	v, err := NewVerifier(r.jwks, r.f.log.vkey)
	if err != nil {
		b.Fatal(err)
	}
	doc, opened := pick(r), []Opening(nil)
	if openings {
		opened = r.openings
	}
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := v.Verify(doc, opened...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is the auditor's hot path for a 1.0.0 receipt: the JWKS
// and the log key are parsed on every call, as Verify does.
func BenchmarkVerify(b *testing.B) { benchVerify(b, func(r *benchReceipts) []byte { return r.v1 }) }

// BenchmarkVerifyV2 is BenchmarkVerify for a 2.0.0 receipt.
func BenchmarkVerifyV2(b *testing.B) { benchVerify(b, func(r *benchReceipts) []byte { return r.v2 }) }

// BenchmarkVerifyV3 is BenchmarkVerify for a 3.0.0 receipt (issue 22's
// target: ≤ 170 µs).
func BenchmarkVerifyV3(b *testing.B) { benchVerify(b, func(r *benchReceipts) []byte { return r.v3 }) }

// BenchmarkVerifierV3 verifies with the key set and log key parsed once,
// as an auditor checking many receipts does.
func BenchmarkVerifierV3(b *testing.B) {
	benchVerifier(b, func(r *benchReceipts) []byte { return r.v3 }, false)
}

// BenchmarkVerifierV3Openings adds the check of every opening (12 SHA-256)
// and the reveal.
func BenchmarkVerifierV3Openings(b *testing.B) {
	benchVerifier(b, func(r *benchReceipts) []byte { return r.v3 }, true)
}

// BenchmarkVerifyFloor is what no verifier of this format can avoid: the
// two Ed25519 verifications (the JWS, the checkpoint note) over the same
// bytes. Verify's cost above it is parsing, hashing and checking.
func BenchmarkVerifyFloor(b *testing.B) {
	r := newBenchReceipts(b)
	doc, err := parseReceipt(r.v3)
	if err != nil {
		b.Fatal(err)
	}
	parts, _ := splitJWSBytes(doc.jws)
	pub := r.f.signer.PublicKey()
	_, _, cp, _ := ParseTlogProof(doc.tlogProof)
	text, _, _ := splitNote(cp)
	_, sigLines, _ := splitNote(cp)
	sig, _ := decodeB64StdStrict(sigLines[0][len("— ")+len(testOrigin)+1:])
	logPub := logPublicKey(b, r.f.log.vkey)
	signingInput := doc.jws[:parts.signingInputLen]
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if !ed25519.Verify(pub, signingInput, parts.signature) || !ed25519.Verify(logPub, text, sig[4:]) {
			b.Fatal("floor: signature")
		}
	}
}

// BenchmarkVerifyV4 is BenchmarkVerify for a 4.0.0 receipt, the one the
// engine issues (issue 22's target: ≤ 170 µs).
func BenchmarkVerifyV4(b *testing.B) { benchVerify(b, func(r *benchReceipts) []byte { return r.v4 }) }

// BenchmarkVerifierV4 verifies 4.0.0 receipts with the key set and log key
// parsed once.
func BenchmarkVerifierV4(b *testing.B) {
	benchVerifier(b, func(r *benchReceipts) []byte { return r.v4 }, false)
}

// BenchmarkVerifyV4Floor is what no verifier of 4.0.0 can avoid: the two
// Ed25519 verifications of the checkpoint text, by the log key and by the
// receipt key.
func BenchmarkVerifyV4Floor(b *testing.B) {
	r := newBenchReceipts(b)
	doc, err := parseReceipt(r.v4)
	if err != nil {
		b.Fatal(err)
	}
	_, _, cp, _ := ParseTlogProof(doc.tlogProof)
	text, sigLines, _ := splitNote(cp)
	if len(sigLines) != 2 {
		b.Fatalf("checkpoint signature lines %q", sigLines)
	}
	sig, _ := decodeB64StdStrict(sigLines[0][len("— ")+len(testOrigin)+1:])
	cosig, _ := decodeB64StdStrict(sigLines[1][len("— ")+len(r.f.signer.KeyID())+1:])
	logPub, pub := logPublicKey(b, r.f.log.vkey), r.f.signer.PublicKey()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if !ed25519.Verify(logPub, text, sig[4:]) || !ed25519.Verify(pub, text, cosig[4:]) {
			b.Fatal("floor: signature")
		}
	}
}

// logPublicKey extracts the Ed25519 key of a note verifier key.
func logPublicKey(t testing.TB, vkey string) ed25519.PublicKey {
	t.Helper()
	if _, err := note.NewVerifier(vkey); err != nil {
		t.Fatal(err)
	}
	i := len(vkey) - 1
	for vkey[i] != '+' {
		i--
	}
	raw, err := decodeB64StdStrict(vkey[i+1:])
	if err != nil || len(raw) != 33 {
		t.Fatalf("log key %q", vkey)
	}
	return ed25519.PublicKey(raw[1:])
}

// BenchmarkSign is the service's hot path for a 1.0.0 receipt: check,
// encode and sign claims.
func BenchmarkSign(b *testing.B) {
	f := newFixture(b)
	c := sampleClaims(0)
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := f.signer.Sign(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignV3 signs concealed 3.0.0 claims: the work the engine does in
// the caller's goroutine, before the committer.
func BenchmarkSignV3(b *testing.B) {
	f := newFixture(b)
	c, _ := conceal(b, sampleClaimsV3Clear(0), 1)
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := f.signer.Sign(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSealV4 seals concealed 4.0.0 claims: the receipt work the
// engine does in the caller's goroutine now (rules, encoding; no
// signature).
func BenchmarkSealV4(b *testing.B) {
	c, _ := conceal(b, asV4(sampleClaimsV3Clear(0)), 1)
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := Seal(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConcealSignV3 is Conceal (12 salts from crypto/rand, 12
// commitments) and Sign together: the whole receipt work per record.
func BenchmarkConcealSignV3(b *testing.B) {
	f := newFixture(b)
	clear := sampleClaimsV3Clear(0)
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		c, _, err := Conceal(clear, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.signer.Sign(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssemble is the read path of GET /v1/receipts/{id}.
func BenchmarkAssemble(b *testing.B) {
	f := newFixture(b)
	f.issue(b, sampleClaims(0), sampleClaims(1), sampleClaims(2))
	c, _ := conceal(b, sampleClaimsV3Clear(3), 3)
	jws, err := f.signer.Sign(c)
	if err != nil {
		b.Fatal(err)
	}
	index := f.log.append(b, []byte(jws))
	proof, cp := f.log.prove(b, index), f.log.checkpoint(b)
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := Assemble(jws, index, proof, cp); err != nil {
			b.Fatal(err)
		}
	}
}
