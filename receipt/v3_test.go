package receipt

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestV3RoundTrip issues SpecV3 receipts as the engine will: conceal the
// clear claims, sign before the log position is known, append, assemble.
// Verify must return the public claims with the index of the proof, and
// Reveal with the openings must give the clear claims back.
func TestV3RoundTrip(t *testing.T) {
	f := newFixture(t)
	checkRoundTrip(t, f, []Claims{sampleClaimsV3Clear(0), sampleClaimsV3B2BClear(1), sampleClaimsV3UKClear(2), pendingClaimsV3Clear(3)}, f.issue)
}

// checkRoundTrip conceals each of the clear claims, issues the public ones
// with issue (indexes 0, 1, ...), and checks that Verify returns the
// public claims with their log index and that a Verifier given the
// openings returns the clear ones.
func checkRoundTrip(t *testing.T, f *fixture, clear []Claims, issue func(testing.TB, ...Claims) [][]byte) {
	t.Helper()
	var public []Claims
	var openings [][]Opening
	for i, c := range clear {
		p, o := conceal(t, c, byte(10+i))
		public, openings = append(public, p), append(openings, o)
	}
	rs := issue(t, public...)
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
			t.Errorf("receipt %d: verified claims differ from the issued ones:\n got %+v\nwant %+v", i, *got, want)
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

// TestSignV3Rules: the rules of doc.go "# Version 3.0.0", broken once each,
// on concealed claims (what Sign signs).
func TestSignV3Rules(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	base, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	for _, tc := range []struct {
		name   string
		mutate func(c *Claims)
		field  string // "" = valid
	}{
		{"sample is valid", func(c *Claims) {}, ""},
		{"uk-vat", func(c *Claims) {
			*c, _ = conceal(t, sampleClaimsV3UKClear(0), 1)
		}, ""},
		{"pending", func(c *Claims) { *c, _ = conceal(t, pendingClaimsV3Clear(0), 1) }, ""},
		{"b2b with registry", func(c *Claims) { *c, _ = conceal(t, sampleClaimsV3B2BClear(0), 1) }, ""},
		{"jurisdiction unknown", func(c *Claims) { c.Jurisdiction, c.Ruleset = "us-sales-tax", "us-sales-tax-2026" }, "/jurisdiction"},
		{"event id of 31 characters", func(c *Claims) {
			c.EventID = "x402-" + strings.Repeat("a", 31)
			c.ReceiptID = "rcpt_" + c.EventID
			c.Invoice.ID = c.EventID
		}, "/event_id"},
		{"event id of 32 characters", func(c *Claims) {
			c.EventID = "x402-" + strings.Repeat("a", 32)
			c.ReceiptID = "rcpt_" + c.EventID
		}, ""},
		{"sandbox id shape", func(c *Claims) {
			c.EventID = "x402-sandbox-" + strings.Repeat("0f", 16)
			c.ReceiptID = "rcpt_" + c.EventID
		}, ""},
		{"revision id shape", func(c *Claims) {
			c.EventID = "x402-" + strings.Repeat("0f", 16) + "-r2"
			c.ReceiptID, c.Supersedes = "rcpt_"+c.EventID, "rcpt_x402-9f2c4e1a0b7d3c5e0a"
		}, ""},
		{"tx hash in clear", func(c *Claims) { c.Settlement.TxHash = sampleClaims(0).Settlement.TxHash }, "/settlement/tx_hash"},
		{"payer in clear", func(c *Claims) { c.Settlement.Payer = sampleClaims(0).Settlement.Payer }, "/settlement/payer"},
		{"receiver in clear", func(c *Claims) { c.Settlement.Receiver = sampleClaims(0).Settlement.Receiver }, "/settlement/receiver"},
		{"log index in clear", func(c *Claims) { c.Settlement.LogIndex = ptr(int64(2)) }, "/settlement/log_index"},
		{"block number in clear", func(c *Claims) { c.Settlement.Chain.BlockNumber = 1 }, "/settlement/chain/block_number"},
		{"block hash in clear", func(c *Claims) { c.Settlement.Chain.BlockHash = sampleClaims(0).Settlement.Chain.BlockHash }, "/settlement/chain/block_hash"},
		{"buyer name in clear", func(c *Claims) { c.Buyer.Name = "Jan Kowalski" }, "/buyer/name"},
		{"buyer postal code in clear", func(c *Claims) { c.Buyer.PostalCode = "00-950" }, "/buyer/postal_code"},
		{"buyer VAT number in clear", func(c *Claims) { c.Buyer.VATNumber = "PL5260250274" }, "/buyer/vat_number"},
		{"evidence value in clear", func(c *Claims) {
			c.Buyer.LocationEvidence = append([]LocationEvidence(nil), c.Buyer.LocationEvidence...)
			c.Buyer.LocationEvidence[1].Value = "203.0.113.7"
		}, "/buyer/location_evidence/1/value"},
		{"evidence without country", func(c *Claims) {
			c.Buyer.LocationEvidence = append([]LocationEvidence(nil), c.Buyer.LocationEvidence...)
			c.Buyer.LocationEvidence[0].Country = ""
		}, "/buyer/location_evidence/0/country"},
		{"evidence kind upper case", func(c *Claims) {
			c.Buyer.LocationEvidence = append([]LocationEvidence(nil), c.Buyer.LocationEvidence...)
			c.Buyer.LocationEvidence[0].Kind = "IP"
		}, "/buyer/location_evidence/0/kind"},
		{"evidence item without its commitment", func(c *Claims) {
			c.Buyer.LocationEvidence = append(c.Buyer.LocationEvidence, LocationEvidence{Kind: EvidenceSIMCountryCode, Country: "PL"})
		}, "/commitments"},
		{"ubl hash in clear", func(c *Claims) {
			c.Invoice = &Invoice{ID: c.Invoice.ID, UBLSHA256: sampleClaims(0).Invoice.UBLSHA256}
		}, "/invoice/ubl_sha256"},
		{"record hash in clear", func(c *Claims) { c.RecordSHA256 = sampleClaimsV3Clear(0).RecordSHA256 }, "/record_sha256"},
		{"tx hash not committed", func(c *Claims) { delete(c.Commitments, "/settlement/tx_hash") }, "/commitments"},
		{"block number not committed", func(c *Claims) { delete(c.Commitments, "/settlement/chain/block_number") }, "/commitments"},
		{"ubl hash not committed", func(c *Claims) { delete(c.Commitments, "/invoice/ubl_sha256") }, "/commitments"},
		{"ubl hash committed without an invoice", func(c *Claims) { c.Invoice = nil }, "/commitments"},
		{"block committed without verification", func(c *Claims) {
			c.Settlement.Chain = ChainFacts{Verification: ChainNotPerformed}
		}, "/commitments"},
		{"registry number committed without registry", func(c *Claims) {
			c.Commitments["/buyer/registry/number"] = c.Commitments["/buyer/name"]
		}, "/commitments"},
		{"commitment of a field in clear elsewhere", func(c *Claims) {
			c.Commitments["/seller/legal_name"] = c.Commitments["/buyer/name"]
		}, "/commitments"},
		{"commitment of evidence beyond the list", func(c *Claims) {
			c.Commitments["/buyer/location_evidence/2/value"] = c.Commitments["/buyer/name"]
		}, "/commitments"},
		{"commitment in hex", func(c *Claims) {
			c.Commitments["/buyer/name"] = "sha256:" + strings.Repeat("ab", 32)
		}, "/commitments/~1buyer~1name"},
		{"commitment of another hash", func(c *Claims) {
			c.Commitments["/buyer/name"] = strings.Replace(c.Commitments["/buyer/name"], "sha256:", "sha512:", 1)
		}, "/commitments/~1buyer~1name"},
		{"no commitments at all", func(c *Claims) { c.Commitments = nil }, "/commitments"},
		{"fx_gbp on v3", func(c *Claims) { c.FXGBP = sampleClaimsV2(0).FXGBP }, "/fx_gbp"},
		{"exact gross with 13 decimals", func(c *Claims) { c.FX.GrossEURExact = "10.3321663393391" }, "/fx/gross_eur_exact"},
		{"exact gross with exponent", func(c *Claims) { c.FX.GrossEURExact = "1.0332e1" }, "/fx/gross_eur_exact"},
		{"exact net + vat != gross", func(c *Claims) { c.FX.VATEURExact = "1.932031104105" }, "/fx"},
		{"exact net without vat", func(c *Claims) { c.FX.VATEURExact = "" }, "/fx"},
		{"exact net without gross", func(c *Claims) { c.FX.GrossEURExact = "" }, "/fx"},
		{"exact split without rounded split", func(c *Claims) { c.FX.NetEUR, c.FX.VATEUR = "", "" }, "/fx"},
		{"only exact gross", func(c *Claims) { c.FX.NetEURExact, c.FX.VATEURExact = "", "" }, ""},
		{"exact credit", func(c *Claims) {
			c.Supersedes = "rcpt_x402-9f2c4e1a0b7d3c5e0a"
			c.FX.GrossEUR, c.FX.NetEUR, c.FX.VATEUR = "-10.33", "-8.40", "-1.93"
			c.FX.GrossEURExact, c.FX.NetEURExact, c.FX.VATEURExact = "-10.332166339339", "-8.400135235235", "-1.932031104104"
		}, ""},
		{"tax currency EUR", func(c *Claims) { c.FXTaxCurrency.Currency, c.FXTaxCurrency.Pair = "EUR", "USDC/EUR" }, "/fx_tax_currency/currency"},
		{"tax currency lower case", func(c *Claims) { c.FXTaxCurrency.Currency = "pln" }, "/fx_tax_currency/currency"},
		{"tax currency pair of another currency", func(c *Claims) { c.FXTaxCurrency.Pair = "USDC/GBP" }, "/fx_tax_currency/pair"},
		{"tax currency vat with 3 decimals", func(c *Claims) { c.FXTaxCurrency.VAT = "8.240" }, "/fx_tax_currency/vat"},
		{"tax currency arithmetic", func(c *Claims) { c.FXTaxCurrency.Net = "35.82" }, "/fx_tax_currency"},
		{"tax currency exact arithmetic", func(c *Claims) { c.FXTaxCurrency.NetExact = "35.830776845864" }, "/fx_tax_currency"},
		{"tax currency amount differs", func(c *Claims) { c.FXTaxCurrency.AmountUSDC = "12.1" }, "/fx_tax_currency/amount_usdc"},
		{"tax currency rate missing", func(c *Claims) { c.FXTaxCurrency.USDPerUnit.Raw = "" }, "/fx_tax_currency/usd_per_unit/raw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneClaims(&base)
			fx, tax := *base.FX, *base.FXTaxCurrency
			c.FX, c.FXTaxCurrency = &fx, &tax
			tc.mutate(&c)
			_, err := s.Sign(c)
			var ce *ClaimsError
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("valid claims refused: %v", err)
			case tc.field != "" && !errors.As(err, &ce):
				t.Errorf("signed, or wrong error %v; want a ClaimsError at %s", err, tc.field)
			case tc.field != "" && ce.Field != tc.field:
				t.Errorf("error at %s (%v), want %s", ce.Field, err, tc.field)
			}
		})
	}
}

// TestV3MembersRefusedInOlderVersions: what only 3.0.0 carries is refused
// in 1.0.0 and 2.0.0 claims, so an old verifier never meets it.
func TestV3MembersRefusedInOlderVersions(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	v3 := sampleClaimsV3Clear(0)
	for _, tc := range []struct {
		name   string
		mutate func(c *Claims)
		field  string
	}{
		{"commitments", func(c *Claims) { c.Commitments = map[string]string{} }, "/commitments"},
		{"record hash", func(c *Claims) { c.RecordSHA256 = v3.RecordSHA256 }, "/record_sha256"},
		{"location evidence", func(c *Claims) { c.Buyer.LocationEvidence = v3.Buyer.LocationEvidence }, "/buyer/location_evidence"},
		{"exact gross", func(c *Claims) { c.FX.GrossEURExact = "10.332166339339" }, "/fx/gross_eur_exact"},
		{"tax currency", func(c *Claims) { c.FXTaxCurrency = v3.FXTaxCurrency }, "/fx_tax_currency"},
	} {
		for _, base := range []Claims{sampleClaims(0), sampleClaimsV2(0)} {
			c := base
			if c.FX == nil {
				c.FX = sampleClaims(0).FX
			}
			fx := *c.FX
			c.FX = &fx
			tc.mutate(&c)
			_, err := s.Sign(c)
			var ce *ClaimsError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				t.Errorf("%s in %s: %v, want a ClaimsError at %s", tc.name, base.Spec, err, tc.field)
			}
		}
	}
	if _, _, err := Conceal(sampleClaims(0), testRand(1)); err == nil {
		t.Errorf("Conceal accepted 1.0.0 claims")
	}
}

// TestV3SamePositionFreeJWSTwice is the attack doc.go "# Version 3.0.0"
// describes: the log's key holder appends one 3.0.0 JWS at two indexes.
// Both proofs verify (the index is not signed), and LeafReceiptID is how a
// log walker finds the duplicate.
func TestV3SamePositionFreeJWSTwice(t *testing.T) {
	f := newFixture(t)
	public, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	jws, err := f.signer.Sign(public)
	if err != nil {
		t.Fatal(err)
	}
	first := f.log.append(t, []byte(jws))
	f.log.append(t, []byte(mustSign(t, f.signer, sampleClaims(1))))
	second := f.log.append(t, []byte(jws))
	cp := f.log.checkpoint(t)
	seen := map[string]int64{}
	var dup []int64
	for _, index := range []int64{first, second} {
		r, err := Assemble(jws, index, f.log.prove(t, index), cp)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Verify(r, f.jwks(t), f.log.vkey)
		if err != nil || c.Log.Index != index {
			t.Fatalf("index %d: %v, %+v", index, err, c)
		}
		id, err := LeafReceiptID([]byte(jws))
		if err != nil || id != public.ReceiptID {
			t.Fatalf("LeafReceiptID: %q, %v", id, err)
		}
		if at, ok := seen[id]; ok {
			dup = append(dup, at, index)
		}
		seen[id] = index
	}
	if len(dup) != 2 || dup[0] != first || dup[1] != second {
		t.Errorf("duplicate not found: %v", dup)
	}
	// A 1.0.0 JWS names its index: its second copy does not verify.
	old := mustSign(t, f.signer, withIndex(sampleClaims(2), f.log.size))
	at := f.log.append(t, []byte(old))
	again := f.log.append(t, []byte(old))
	cp = f.log.checkpoint(t)
	if _, err := Assemble(old, again, f.log.prove(t, again), cp); err == nil {
		t.Errorf("a 1.0.0 JWS assembled at a second index")
	}
	r, err := Assemble(old, at, f.log.prove(t, at), cp)
	if err != nil {
		t.Fatal(err)
	}
	x := decodeReceipt(t, r)
	x.TlogProof = FormatTlogProof(again, f.log.prove(t, again), cp)
	if _, err := Verify(encodeReceipt(t, x), f.jwks(t), f.log.vkey); stepOf(err) != StepIndex {
		t.Errorf("1.0.0 JWS at a second index: %v, want step %s", err, StepIndex)
	}
	if _, err := LeafReceiptID([]byte("a.b.c")); err == nil {
		t.Errorf("LeafReceiptID of garbage succeeded")
	}
}

func mustSign(t testing.TB, s *Signer, c Claims) string {
	t.Helper()
	jws, err := s.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return jws
}

func withIndex(c Claims, index int64) Claims {
	c.Log = LogRef{Origin: testOrigin, Index: index}
	return c
}

// TestV3AssembleChecks: Assemble takes the index of a 3.0.0 JWS from its
// argument, and still refuses what is not consistent.
func TestV3AssembleChecks(t *testing.T) {
	f := newFixture(t)
	public, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	public.Log.Index = 99 // not signed: ignored
	jws := mustSign(t, f.signer, public)
	index := f.log.append(t, []byte(jws))
	cp := f.log.checkpoint(t)
	if _, err := Assemble(jws, index, f.log.prove(t, index), cp); err != nil {
		t.Errorf("assemble: %v", err)
	}
	other := newMemLog(t, "other.example/log", 3)
	other.append(t, []byte(jws))
	if _, err := Assemble(jws, 0, other.prove(t, 0), other.checkpoint(t)); err == nil || !strings.Contains(err.Error(), "other.example/log") {
		t.Errorf("checkpoint of another log: %v", err)
	}
	if _, err := Assemble(jws, 1, f.log.prove(t, 0), cp); err == nil {
		t.Errorf("index beyond the tree accepted")
	}
	if _, err := Assemble(jws, -1, f.log.prove(t, 0), cp); err == nil {
		t.Errorf("negative index accepted")
	}
}

// TestKeyringSignsV3: the engine signs through Keyring.Sign.
func TestKeyringSignsV3(t *testing.T) {
	k := openTestKeyring(t, t.TempDir(), EnvProduction, fixedTime.Add(-time.Hour), 1)
	f := newFixture(t)
	public, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	r := f.issueWith(t, k.Sign, public)[0]
	if _, err := Verify(r, jwksOf(t, k), f.log.vkey); err != nil {
		t.Fatal(err)
	}
	sb, _ := conceal(t, sandboxClaimsV3Clear(1), 2)
	if _, err := k.Sign(sb); !errors.Is(err, ErrWrongEnvironment) {
		t.Errorf("production keyring signed a sandbox receipt: %v", err)
	}
}
