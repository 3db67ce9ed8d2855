package receipt

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
)

// TestV4RoundTrip issues SpecV4 receipts as the engine does: conceal the
// clear claims, seal them before the log position is known, log the
// payload, cosign the checkpoint with the receipt key, assemble. Verify
// must return the public claims with the index of the proof, and the
// openings must reveal the clear claims.
func TestV4RoundTrip(t *testing.T) {
	f := newFixture(t)
	checkRoundTrip(t, f, []Claims{asV4(sampleClaimsV3Clear(0)), asV4(sampleClaimsV3B2BClear(1)), asV4(sampleClaimsV3UKClear(2)), asV4(pendingClaimsV3Clear(3))}, f.issueV4)
}

// TestSealIsV3Payload: a 4.0.0 payload is exactly the payload a 3.0.0 JWS
// of the same claims signs, with the spec string changed: the same claims,
// member order and encoding.
func TestSealIsV3Payload(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	for i, clear := range []Claims{sampleClaimsV3Clear(0), sampleClaimsV3B2BClear(1), sampleClaimsV3UKClear(2), pendingClaimsV3Clear(3)} {
		c3, _ := conceal(t, clear, byte(20+i))
		jws, err := s.Sign(c3)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := splitJWS(jws)
		if err != nil {
			t.Fatal(err)
		}
		c4 := c3
		c4.Spec = SpecV4
		p, err := Seal(c4)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Replace(string(parts.payload), SpecV3, SpecV4, 1); string(p) != want {
			t.Errorf("claims %d: sealed\n%s\nwant\n%s", i, p, want)
		}
		if !IsLeafV4(p) {
			t.Errorf("claims %d: the payload is not recognised as a 4.0.0 leaf", i)
		}
		back, err := decodeLeafV4(p)
		if err != nil {
			t.Fatalf("claims %d: %v", i, err)
		}
		c4.Log.Index = 0
		if !reflect.DeepEqual(back, c4) {
			t.Errorf("claims %d: decoded %+v, want %+v", i, back, c4)
		}
	}
}

// TestSealRefusals: Seal writes only valid SpecV4 claims (the rules of
// Sign, shared through checkClaims, TestSignV3Rules), and Sign refuses
// SpecV4 claims, which have no JWS.
func TestSealRefusals(t *testing.T) {
	c3, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	if _, err := Seal(c3); !errors.Is(err, ErrInvalidClaims) {
		t.Errorf("Seal of 3.0.0 claims: %v, want ErrInvalidClaims", err)
	}
	c4, _ := conceal(t, asV4(sampleClaimsV3Clear(0)), 1)
	s, _ := NewSigner(seedKey(1))
	var ce *ClaimsError
	if _, err := s.Sign(c4); !errors.As(err, &ce) || ce.Field != "/spec" {
		t.Errorf("Sign of 4.0.0 claims: %v, want a ClaimsError at /spec", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(c *Claims)
		field  string
	}{
		{"tx hash in clear", func(c *Claims) { c.Settlement.TxHash = sampleClaims(0).Settlement.TxHash }, "/settlement/tx_hash"},
		{"buyer name in clear", func(c *Claims) { c.Buyer.Name = "Jan Kowalski" }, "/buyer/name"},
		{"short event id", func(c *Claims) {
			c.EventID = "x402-" + strings.Repeat("a", 31)
			c.ReceiptID = "rcpt_" + c.EventID
		}, "/event_id"},
		{"fx_gbp", func(c *Claims) { c.FXGBP = sampleClaimsV2(0).FXGBP }, "/fx_gbp"},
		{"exact arithmetic", func(c *Claims) { c.FX.VATEURExact = "1.932031104105" }, "/fx"},
		{"no commitments", func(c *Claims) { c.Commitments = nil }, "/commitments"},
		{"log origin with a space", func(c *Claims) { c.Log.Origin = "a b" }, "/log/origin"},
	} {
		c := cloneClaims(&c4)
		fx := *c4.FX
		c.FX = &fx
		tc.mutate(&c)
		_, err := Seal(c)
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%s: %v, want a ClaimsError at %s", tc.name, err, tc.field)
		}
	}
	// Conceal takes SpecV4 claims in clear as it takes SpecV3 ones.
	if _, _, err := Conceal(asV4(sampleClaimsV3Clear(0)), testRand(1)); err != nil {
		t.Errorf("Conceal of 4.0.0 claims: %v", err)
	}
}

// TestLeafReceiptIDV4: tools that walk the log read a 4.0.0 leaf's id,
// and a JSON document that is not a 4.0.0 payload is not one.
func TestLeafReceiptIDV4(t *testing.T) {
	c, _ := conceal(t, asV4(sampleClaimsV3Clear(7)), 1)
	p, err := Seal(c)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := LeafReceiptID(p); err != nil || id != c.ReceiptID {
		t.Errorf("LeafReceiptID = %q, %v; want %q", id, err, c.ReceiptID)
	}
	for _, doc := range []string{`{"id":"x402-1","object":"settlement"}`, `{"spec":"service.receipt/3.0.0"}`, `{ "spec":"service.receipt/4.0.0"}`} {
		if IsLeafV4([]byte(doc)) {
			t.Errorf("%s taken for a 4.0.0 leaf", doc)
		}
	}
	if _, err := LeafReceiptID(append(p[:len(p)-1:len(p)-1], ` }`...)); err == nil {
		t.Errorf("a 4.0.0 leaf in another spelling has an id")
	}
}

// TestKeyringHoldAndCosigners: the active key cosigns; a receipt admitted
// under a key (Hold) that is logged after a rotation has its checkpoint
// cosigned by the retired key too, whose window holds its iat, so it
// verifies; the same receipt with the new key's cosignature alone would
// not. Once released, the retired key stops cosigning.
func TestKeyringHoldAndCosigners(t *testing.T) {
	k := openTestKeyring(t, t.TempDir(), EnvProduction, fixedTime.Add(-48*time.Hour), 1)
	oldKid := k.Signer().KeyID()
	names := func() []string {
		var out []string
		for _, s := range k.Cosigners() {
			out = append(out, s.Name())
		}
		return out
	}
	if got := k.Cosigners(); len(got) != 1 || got[0].Name() != oldKid || got[0].KeyHash() != NoteKeyHash(oldKid, k.Signer().PublicKey()) {
		t.Fatalf("cosigners %v, want the active key %s", names(), oldKid)
	}

	f := newFixture(t)
	c, _ := conceal(t, asV4(sampleClaimsV3Clear(0)), 1)
	c.IssuedAt = fixedTime.Add(-time.Minute).Unix()
	c.Log.Origin = f.log.origin
	h, err := k.Hold(&c)
	if err != nil {
		t.Fatal(err)
	}
	if h.KeyID() != oldKid {
		t.Errorf("hold on %s, want %s", h.KeyID(), oldKid)
	}
	p, err := Seal(c)
	if err != nil {
		t.Fatal(err)
	}
	index := f.log.append(t, p)
	if err := k.Rotate(fixedTime, testRand(2)); err != nil {
		t.Fatal(err)
	}
	newKid := k.Signer().KeyID()
	if got := names(); !reflect.DeepEqual(got, []string{newKid, oldKid}) {
		t.Fatalf("cosigners after rotate %v, want the new key, then the held one", got)
	}
	jwks := jwksOf(t, k)
	for _, tc := range []struct {
		name      string
		cosigners []note.Signer
		step      string
	}{
		{"cosigned while held", k.Cosigners(), ""},
		{"cosigned by the new key alone", []note.Signer{k.Signer().NoteSigner()}, StepKeyWindow},
	} {
		f.log.cosigners = tc.cosigners
		r, err := Assemble(string(p), index, f.log.prove(t, index), f.log.checkpoint(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(r, jwks, f.log.vkey); stepOf(err) != tc.step {
			t.Errorf("%s: %v, want step %q", tc.name, err, tc.step)
		}
	}
	h.Release()
	if got := names(); !reflect.DeepEqual(got, []string{newKid}) {
		t.Errorf("cosigners after release %v, want the new key alone", got)
	}
	if err := k.Rotate(fixedTime.Add(time.Hour), testRand(3)); err != nil {
		t.Fatal(err)
	}
	if len(k.retired) != 0 || len(k.Cosigners()) != 1 {
		t.Errorf("released keys kept: %d retired, cosigners %v", len(k.retired), names())
	}

	if h, err := k.Hold(nil); err != nil || h.KeyID() != "" {
		t.Errorf("Hold(nil) = %v, %v: an entry without a receipt holds nothing", h.KeyID(), err)
	} else {
		h.Release()
	}
	late := c
	late.IssuedAt = fixedTime.Unix() // before the newest key's nbf
	if _, err := k.Hold(&late); !errors.Is(err, ErrOutsideKeyWindow) {
		t.Errorf("hold before the key's nbf: %v", err)
	}
	sb := c
	sb.Environment, sb.Watermark = EnvSandbox, SandboxWatermark
	sb.IssuedAt = fixedTime.Add(2 * time.Hour).Unix()
	if _, err := k.Hold(&sb); !errors.Is(err, ErrWrongEnvironment) {
		t.Errorf("hold of sandbox claims by the production keyring: %v", err)
	}
}

// TestKeyringHoldRotateConcurrent is the engine's use under rotation, with
// -race: goroutines admit (Hold), seal, log and "commit" (a checkpoint
// cosigned by Cosigners at that moment) receipts while the keyring
// rotates; every receipt verifies against the final key set.
func TestKeyringHoldRotateConcurrent(t *testing.T) {
	var clock atomic.Int64
	clock.Store(fixedTime.Unix())
	k := openTestKeyring(t, t.TempDir(), EnvProduction, fixedTime, 1)
	f := newFixture(t)
	var mu sync.Mutex // the committer
	var rs [][]byte
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 15 {
				clear := asV4(sampleClaimsV3Clear(g*15 + i))
				clear.Log.Origin = f.log.origin
				var h Hold
				for {
					clear.IssuedAt = clock.Load()
					var err error
					if h, err = k.Hold(&clear); err == nil {
						break
					} else if !errors.Is(err, ErrOutsideKeyWindow) {
						t.Error(err)
						return
					}
				}
				c, _, err := Conceal(clear, nil)
				if err != nil {
					t.Error(err)
					return
				}
				p, err := Seal(c)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				index := f.log.append(t, p)
				f.log.cosigners = k.Cosigners()
				r, err := Assemble(string(p), index, f.log.prove(t, index), f.log.checkpoint(t))
				mu.Unlock()
				h.Release()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				rs = append(rs, r)
				mu.Unlock()
			}
		})
	}
	for i := range 5 {
		now := clock.Add(1)
		if err := k.Rotate(time.Unix(now, 0), testRand(byte(10+i))); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	jwks := jwksOf(t, k)
	for _, r := range rs {
		if _, err := Verify(r, jwks, f.log.vkey); err != nil {
			t.Errorf("%v", err)
		}
	}
	if len(rs) != 60 {
		t.Errorf("%d receipts", len(rs))
	}
}

// TestNoteKeyOfReceiptKey: the cosignature line of a receipt key is the
// C2SP signed-note signature golang.org/x/mod/sumdb/note makes and checks:
// Key.NoteVerifierKey reads back as a note verifier whose name is the kid
// and whose hash is NoteKeyHash, and it verifies what NoteSigner signs.
func TestNoteKeyOfReceiptKey(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	key := mustKey(t, seedKey(1), fixedTime)
	vkey, err := key.NoteVerifierKey()
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatalf("%s: %v", vkey, err)
	}
	ns := s.NoteSigner()
	if v.Name() != key.Kid || ns.Name() != key.Kid || v.KeyHash() != ns.KeyHash() || ns.KeyHash() != NoteKeyHash(key.Kid, s.PublicKey()) {
		t.Fatalf("verifier %s+%08x, signer %s+%08x", v.Name(), v.KeyHash(), ns.Name(), ns.KeyHash())
	}
	msg, err := note.Sign(&note.Note{Text: testOrigin + "\n1\n" + strings.Repeat("A", 43) + "=\n"}, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Errorf("note.Open with the receipt key: %v", err)
	}
}

// TestOlderReceiptsUnderCosignedCheckpoints: a checkpoint cosigned by the
// receipt key is an ordinary checkpoint to receipts of earlier versions (the
// line of a key the verifier does not ask about is ignored), so a 3.0.0 or
// 1.0.0 receipt logged in a 4.0.0 service's log verifies.
func TestOlderReceiptsUnderCosignedCheckpoints(t *testing.T) {
	f := newFixture(t)
	f.log.cosigners = []note.Signer{f.signer.NoteSigner()}
	c3, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	for i, r := range f.issue(t, sampleClaims(1), c3) {
		if !strings.Contains(string(r), "— "+f.signer.KeyID()+" ") {
			t.Fatalf("receipt %d: the checkpoint is not cosigned", i)
		}
		if _, err := Verify(r, f.jwks(t), f.log.vkey); err != nil {
			t.Errorf("receipt %d: %v", i, err)
		}
	}
}

// TestCosignatureIsNoJWSSignature: the receipt key signs two kinds of
// message, JWS signing inputs (receipts up to 3.0.0, statements) and
// checkpoint texts. A checkpoint text always holds newlines and a JWS
// signing input never does (its parts are canonical base64url), so no
// signature of one kind verifies as the other.
func TestCosignatureIsNoJWSSignature(t *testing.T) {
	r := decodeReceipt(t, readTestdata(t, "receipt-v4.json"))
	_, _, cp, err := ParseTlogProof(r.TlogProof)
	if err != nil {
		t.Fatal(err)
	}
	text, _, _ := splitNote(cp)
	if !strings.Contains(string(text), "\n") {
		t.Fatal("a checkpoint text without a newline")
	}
	// The text as the two first parts of a JWS: refused before any
	// signature is checked.
	h, p, _ := strings.Cut(string(text), "\n")
	if _, err := splitJWS(h + "." + p + ".AAAA"); err == nil {
		t.Errorf("a JWS whose signing input is a checkpoint text was accepted")
	}
	jws, err := NewSigner(seedKey(1))
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := jws.SignStatement("fiscal402.test+jws", text)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.LastIndexByte(stmt, '.'); strings.ContainsAny(stmt[:i], "\n\r") {
		t.Errorf("a JWS signing input with a line break: %q", stmt[:i])
	}
}

// FuzzSealRoundTrip: whatever text the free-form claims hold, a payload
// Seal writes decodes (decodeLeafV4, Verify's decoder) to the claims it
// was sealed from: Seal never issues a 4.0.0 receipt Verify refuses. Text
// that is not UTF-8 has no canonical spelling in the payload, so Seal
// refuses it (*ClaimsError at its field).
func FuzzSealRoundTrip(f *testing.F) {
	f.Add("Example Digital GmbH", "Art. 58 Directive 2006/112/EC", "free_during_beta")
	f.Add("A\xffB", "x", "y")
	f.Add(`\ufffd`, "\ufffd", `a\\\ufffd`)
	f.Add("<&>\u2028\x01\"\\", "é😀", "\xed\xa0\x80")
	base, _ := conceal(f, asV4(sampleClaimsV3Clear(0)), 1)
	f.Fuzz(func(t *testing.T, seller, basis, label string) {
		c := cloneClaims(&base)
		k, fee := *base.Classification, *base.Fee
		c.Classification, c.Fee = &k, &fee
		c.Seller.LegalName, c.Classification.LegalBasis, c.Fee.Label = seller, basis, label
		p, err := Seal(c)
		valid := utf8.ValidString(seller) && utf8.ValidString(basis) && utf8.ValidString(label)
		var ce *ClaimsError
		switch {
		case err != nil && !errors.As(err, &ce):
			t.Fatalf("Seal: %v", err)
		case err != nil && ce.Problem == "is not valid UTF-8 text":
			want := map[bool]string{true: "/fee/label", false: "/classification/legal_basis"}[utf8.ValidString(basis)]
			if !utf8.ValidString(seller) {
				want = "/seller/legal_name" // the first in payload order
			}
			if valid || ce.Field != want {
				t.Fatalf("refused as not UTF-8 at %q (valid UTF-8: %v), want %q", ce.Field, valid, want)
			}
			return
		case err != nil:
			return // a rule of the format (an empty name, say)
		case !valid:
			t.Fatalf("Seal wrote a payload of text that is not UTF-8: %q", p)
		}
		back, err := decodeLeafV4(p)
		if err != nil {
			t.Fatalf("Seal wrote a payload Verify refuses: %v\n%s", err, p)
		}
		c.Log.Index = 0
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("decoded %+v, sealed %+v", back, c)
		}
	})
}

// TestLeafPayload: the claims' JSON of each kind of leaf the engine logs,
// and none for a document.
func TestLeafPayload(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	c3, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	jws, _ := s.Sign(c3)
	parts, _ := splitJWS(jws)
	c4, _ := conceal(t, asV4(sampleClaimsV3Clear(0)), 1)
	p4, _ := Seal(c4)
	for _, tc := range []struct {
		name    string
		leaf    []byte
		want    []byte
		ok, err bool
	}{
		{"4.0.0 payload", p4, p4, true, false},
		{"3.0.0 JWS", []byte(jws), parts.payload, true, false},
		{"document", []byte(`{"id":"x402-1","object":"settlement"}`), nil, false, false},
		{"JWS with a payload not base64url", []byte("eyJh.!!.c"), nil, true, true},
		{"four parts", []byte(jws + ".x"), nil, false, false},
	} {
		got, ok, err := LeafPayload(tc.leaf)
		if ok != tc.ok || (err != nil) != tc.err || string(got) != string(tc.want) {
			t.Errorf("%s: %.40q %v %v", tc.name, got, ok, err)
		}
	}
}
