package receipt

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/testtool"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixedTime is the clock of every test: 2026-09-15T10:00:00Z.
var fixedTime = time.Date(2026, 9, 15, 10, 0, 0, 0, time.UTC)

// seedKey returns the Ed25519 key whose RFC 8032 seed is 32 times b.
func seedKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

// memLog is an RFC 6962 Merkle log in memory, built with tlog.StoredHashes
// exactly as the ledger package builds it on bbolt, with checkpoints signed
// as C2SP signed notes.
type memLog struct {
	origin string
	hashes []tlog.Hash // by stored-hash index
	size   int64
	signer note.Signer
	vkey   string
	// cosigners sign each checkpoint after the log key (4.0.0: the
	// receipt key).
	cosigners []note.Signer
}

func newMemLog(t testing.TB, origin string, seed byte) *memLog {
	t.Helper()
	skey, vkey, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)), origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return &memLog{origin: origin, signer: s, vkey: vkey}
}

func (l *memLog) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = l.hashes[x]
	}
	return out, nil
}

func (l *memLog) append(t testing.TB, leaf []byte) int64 {
	t.Helper()
	hs, err := tlog.StoredHashes(l.size, leaf, l)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(l.hashes)) != tlog.StoredHashIndex(0, l.size) {
		t.Fatalf("stored hash bookkeeping: have %d, want %d", len(l.hashes), tlog.StoredHashIndex(0, l.size))
	}
	l.hashes = append(l.hashes, hs...)
	l.size++
	return l.size - 1
}

// checkpoint signs the C2SP tlog-checkpoint of the current tree.
func (l *memLog) checkpoint(t testing.TB) []byte {
	t.Helper()
	root, err := tlog.TreeHash(l.size, l)
	if err != nil {
		t.Fatal(err)
	}
	text := l.origin + "\n" + itoa(l.size) + "\n" + root.String() + "\n"
	msg, err := note.Sign(&note.Note{Text: text}, append([]note.Signer{l.signer}, l.cosigners...)...)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func (l *memLog) prove(t testing.TB, index int64) tlog.RecordProof {
	t.Helper()
	p, err := tlog.ProveRecord(l.size, index, l)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

const testOrigin = "ledger.example/fiscal402"

// sampleClaims returns complete, valid SpecV1 claims for event number n.
func sampleClaims(n int) Claims {
	logIndex := int64(2)
	finalized := true
	ev := "x402-9f2c4e1a0b7d3c5e" + string(rune('0'+n%10)) + "a"
	return Claims{
		Spec:         SpecV1,
		ReceiptID:    "rcpt_" + ev,
		EventID:      ev,
		IssuedAt:     fixedTime.Unix(),
		Issuer:       "fiscal402.example",
		Environment:  EnvProduction,
		Custody:      CustodyNone,
		Jurisdiction: JurisdictionEUVAT,
		Ruleset:      "eu-vat-oss-2026.09",
		ReviewStatus: ReviewProcessed,
		Settlement: Settlement{
			Protocol:      "x402",
			Network:       "eip155:8453",
			TxHash:        "0x4a1f0c3b2e5d6f7a8b9c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c",
			LogIndex:      &logIndex,
			Asset:         "USDC",
			AssetContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
			AmountUSDC:    "12.100000",
			Payer:         "0x1111111111111111111111111111111111111111",
			Receiver:      "0x2222222222222222222222222222222222222222",
			Timestamp:     "2026-09-15T09:58:12Z",
			Scheme:        "exact",
			Chain: ChainFacts{
				Verification:  ChainVerified,
				BlockNumber:   35123456,
				BlockHash:     "0x0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223242526272829aa",
				BlockTime:     "2026-09-15T09:58:11Z",
				Confirmations: 12,
				Finalized:     &finalized,
			},
		},
		Seller: Party{LegalName: "Example Digital GmbH", VATNumber: "DE123456789", Country: "DE"},
		Buyer:  Buyer{Country: "FR", PostalCode: "75011"},
		Classification: &Classification{
			Status:            "determined",
			Regime:            "oss_b2c",
			OSSScheme:         "union",
			Category:          "S",
			RatePercent:       "20",
			TaxingCountry:     "FR",
			LegalBasis:        "Art. 58 Directive 2006/112/EC",
			BuyerTreatment:    "B2C",
			RateTable:         "ibericode-vat-rates@2026-07-01",
			RateEffectiveFrom: "2014-01-01",
		},
		FX: &FX{
			Pair:          "USDC/EUR",
			AmountUSDC:    "12.100000",
			USDCUSDRate:   "1",
			USDCUSDSource: "peg",
			USDPerEUR: FXRate{
				Raw:           "1.1711",
				RateDate:      "2026-09-14",
				RequestedDate: "2026-09-15",
				Policy:        "for-day-or-previous",
				Source:        "ECB:EXR.D.USD.EUR.SP00.A",
				Snapshot:      "embedded:sha256:b159cb81",
			},
			GrossEUR: "10.33",
			NetEUR:   "8.61",
			VATEUR:   "1.72",
			Rounding: "half-away-from-zero,scale=2,per-document",
		},
		Invoice: &Invoice{ID: ev, UBLSHA256: "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"},
		Fee:     &Fee{Model: FeeModelBasisPoints, BPS: "0", AccruedEUR: "0.00", Label: "free_during_beta"},
		Log:     LogRef{Origin: testOrigin},
	}
}

// sampleClaimsV2 returns valid experimental SpecV2 (UK VAT) claims.
func sampleClaimsV2(n int) Claims {
	c := sampleClaims(n)
	c.Spec = SpecV2
	c.Jurisdiction = JurisdictionUKVAT
	c.Ruleset = "uk-vat-2026.09"
	c.Seller = Party{LegalName: "Example Digital Ltd", VATNumber: "GB123456782", Country: "GB"}
	c.Buyer = Buyer{Country: "GB", PostalCode: "SW1A 1AA"}
	c.Classification = &Classification{
		Status: "determined", Regime: "uk_domestic", Category: "S", RatePercent: "20",
		TaxingCountry: "GB", LegalBasis: "VATA 1994 s.7A", BuyerTreatment: "B2C",
	}
	c.FX = nil
	c.FXGBP = &FXGBP{
		Pair: "USDC/GBP", AmountUSDC: "12.100000", USDCUSDRate: "1", USDCUSDSource: "peg",
		USDPerGBP: FXRate{Raw: "1.3502", RateDate: "2026-09-14", RequestedDate: "2026-09-15",
			Policy: "for-day-or-previous", Source: "ECB cross EXR.D.USD.EUR / EXR.D.GBP.EUR"},
		GrossGBP: "8.96", NetGBP: "7.47", VATGBP: "1.49", Rounding: "half-away-from-zero,scale=2,per-document",
	}
	c.Fee = nil
	return c
}

// fixture is a receipt service in miniature: a signer, its JWKS, and a log.
type fixture struct {
	signer *Signer
	keys   KeySet
	log    *memLog
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	s, err := NewSigner(seedKey(1))
	if err != nil {
		t.Fatal(err)
	}
	key, err := NewKey(s.PublicKey(), fixedTime.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{signer: s, keys: KeySet{Keys: []Key{key}}, log: newMemLog(t, testOrigin, 7)}
}

func (f *fixture) jwks(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(f.keys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// issue signs every claims value as the next log entry, then assembles all
// receipts against one checkpoint of the final tree.
func (f *fixture) issue(t testing.TB, cs ...Claims) [][]byte {
	t.Helper()
	return f.issueWith(t, f.signer.Sign, cs...)
}

func (f *fixture) issueWith(t testing.TB, sign func(Claims) (string, error), cs ...Claims) [][]byte {
	t.Helper()
	type entry struct {
		jws   string
		index int64
	}
	var es []entry
	for _, c := range cs {
		c.Log = LogRef{Origin: f.log.origin, Index: f.log.size}
		jws, err := sign(c)
		if err != nil {
			t.Fatalf("sign: %v", err)
		}
		es = append(es, entry{jws, f.log.append(t, []byte(jws))})
	}
	cp := f.log.checkpoint(t)
	var out [][]byte
	for _, e := range es {
		r, err := Assemble(e.jws, e.index, f.log.prove(t, e.index), cp)
		if err != nil {
			t.Fatalf("assemble: %v", err)
		}
		out = append(out, r)
	}
	return out
}

// issueV4 seals every claims value (SpecV4, concealed) as the next log
// entry, then assembles all receipts against one checkpoint of the final
// tree, cosigned by the fixture's receipt key as the ledger cosigns with
// Keyring.Cosigners.
func (f *fixture) issueV4(t testing.TB, cs ...Claims) [][]byte {
	t.Helper()
	return f.issueV4With(t, []note.Signer{f.signer.NoteSigner()}, cs...)
}

// issueV4With is issueV4 with the checkpoint cosigned by cosigners.
func (f *fixture) issueV4With(t testing.TB, cosigners []note.Signer, cs ...Claims) [][]byte {
	t.Helper()
	type entry struct {
		leaf  []byte
		index int64
	}
	var es []entry
	for _, c := range cs {
		c.Log = LogRef{Origin: f.log.origin}
		p, err := Seal(c)
		if err != nil {
			t.Fatalf("seal: %v", err)
		}
		es = append(es, entry{p, f.log.append(t, p)})
	}
	saved := f.log.cosigners
	f.log.cosigners = cosigners
	cp := f.log.checkpoint(t)
	f.log.cosigners = saved
	var out [][]byte
	for _, e := range es {
		r, err := Assemble(string(e.leaf), e.index, f.log.prove(t, e.index), cp)
		if err != nil {
			t.Fatalf("assemble: %v", err)
		}
		out = append(out, r)
	}
	return out
}

// asV4 turns clear SpecV3 sample claims into SpecV4 ones (the same claims
// and rules).
func asV4(c Claims) Claims {
	c.Spec = SpecV4
	return c
}

func decodeReceipt(t testing.TB, b []byte) Receipt {
	t.Helper()
	var r Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func encodeReceipt(t testing.TB, r Receipt) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testtool.Golden(t, filepath.Join("testdata", name), got, *update)
}

// v3EventID is a SpecV3 event id: "x402-" + 32 hex digits, the shape of the
// engine's keyed-MAC ids.
func v3EventID(n int) string { return fmt.Sprintf("x402-7c1e9a40d2b35f86a0c4e1b7d9f203%02d", n%100) }

// sampleClaimsV3Clear returns complete SpecV3 eu-vat claims with the
// personal fields in clear, as the engine builds them before Conceal: an
// OSS B2C sale from Germany to Poland (Art. 58 Directive 2006/112/EC),
// with EUR figures and the VAT in złoty (Art. 230). The figures are
// consistent: gross = 12.1 / 1.1711 at 12 decimals, net = gross / 1.23,
// rounded half up to the cent; PLN through the ECB cross rate 1.1711 / 4.2655.
func sampleClaimsV3Clear(n int) Claims {
	c := sampleClaims(n)
	ev := v3EventID(n)
	c.Spec = SpecV3
	c.EventID, c.ReceiptID = ev, "rcpt_"+ev
	c.Buyer = Buyer{
		Country: "PL", PostalCode: "00-950", Name: "Jan Kowalski",
		LocationEvidence: []LocationEvidence{
			{Kind: EvidenceBillingAddress, Country: "PL", Value: "ul. Marszałkowska 1, 00-950 Warszawa"},
			{Kind: EvidenceIPAddress, Country: "PL", Value: "203.0.113.7"},
		},
	}
	c.Classification = &Classification{
		Status: "determined", Regime: "oss_b2c", OSSScheme: "union", Category: "S", RatePercent: "23",
		TaxingCountry: "PL", LegalBasis: "Art. 58 Directive 2006/112/EC", BuyerTreatment: "B2C",
		RateTable: "ibericode-vat-rates@2026-07-01", RateEffectiveFrom: "2011-01-01",
	}
	c.FX.GrossEUR, c.FX.NetEUR, c.FX.VATEUR = "10.33", "8.40", "1.93"
	c.FX.GrossEURExact, c.FX.NetEURExact, c.FX.VATEURExact = "10.332166339339", "8.400135235235", "1.932031104104"
	c.FXTaxCurrency = &FXTaxCurrency{
		Currency: "PLN", Pair: "USDC/PLN", AmountUSDC: "12.100000", USDCUSDRate: "1", USDCUSDSource: "peg",
		USDPerUnit: FXRate{Raw: "0.274551635213", RateDate: "2026-09-14", RequestedDate: "2026-09-15",
			Policy: "for-day-or-previous", Source: "ECB cross EXR.D.USD.EUR / EXR.D.PLN.EUR"},
		Gross: "44.07", Net: "35.83", VAT: "8.24",
		GrossExact: "44.071855520411", NetExact: "35.830776845863", VATExact: "8.241078674548",
		Rounding: "half-away-from-zero,scale=2,per-document",
	}
	c.Invoice = &Invoice{ID: ev, UBLSHA256: "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"}
	c.RecordSHA256 = "a3c1f2b95d4e8f607182939a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e"
	return c
}

// sampleClaimsV3B2BClear is a reverse-charge sale to a French business
// (Art. 196 Directive 2006/112/EC) whose VAT number VIES confirmed.
func sampleClaimsV3B2BClear(n int) Claims {
	c := sampleClaimsV3Clear(n)
	c.Buyer = Buyer{
		Country: "FR", VATNumber: "FR40303265045", Name: "Exemple SAS",
		Registry: &RegistryProof{Registry: "vies", Status: "valid", Number: "FR40303265045",
			RequestIdentifier: "WAPIAAAAZ3kXxq1b", CheckedAt: "2026-09-15T09:58:30Z"},
		LocationEvidence: []LocationEvidence{{Kind: EvidenceBillingAddress, Country: "FR", Value: "12 rue de l'Exemple, 75011 Paris"}},
	}
	c.Classification = &Classification{
		Status: "determined", Regime: "reverse_charge_b2b", Category: "AE", RatePercent: "0", TaxingCountry: "FR",
		VATEX: "VATEX-EU-AE", LegalBasis: "Art. 44 and 196 Directive 2006/112/EC", BuyerTreatment: "B2B",
		InvoiceNote: "Reverse charge", RateTable: "ibericode-vat-rates@2026-07-01",
	}
	c.FX.NetEUR, c.FX.VATEUR = "10.33", "0.00"
	c.FX.NetEURExact, c.FX.VATEURExact = "10.332166339339", "0"
	c.FXTaxCurrency = nil
	return c
}

// sampleClaimsV3UKClear is UK VAT on a domestic sale (VATA 1994 s.7A),
// with the VAT in sterling in fx_tax_currency and no EUR figures.
func sampleClaimsV3UKClear(n int) Claims {
	c := sampleClaimsV3Clear(n)
	c.Jurisdiction, c.Ruleset = JurisdictionUKVAT, "uk-vat-2026.09"
	c.Seller = Party{LegalName: "Example Digital Ltd", VATNumber: "GB123456782", Country: "GB"}
	c.Buyer = Buyer{Country: "GB", PostalCode: "SW1A 1AA"}
	c.Classification = &Classification{
		Status: "determined", Regime: "uk_domestic", Category: "S", RatePercent: "20",
		TaxingCountry: "GB", LegalBasis: "VATA 1994 s.7A", BuyerTreatment: "B2C",
	}
	c.FX = nil
	c.FXTaxCurrency = &FXTaxCurrency{
		Currency: "GBP", Pair: "USDC/GBP", AmountUSDC: "12.100000", USDCUSDRate: "1", USDCUSDSource: "peg",
		USDPerUnit: FXRate{Raw: "1.3502", RateDate: "2026-09-14", RequestedDate: "2026-09-15",
			Policy: "for-day-or-previous", Source: "ECB cross EXR.D.USD.EUR / EXR.D.GBP.EUR"},
		Gross: "8.96", Net: "7.47", VAT: "1.49",
		GrossExact: "8.961635313287", NetExact: "7.468029427739", VATExact: "1.493605885548",
		Rounding: "half-away-from-zero,scale=2,per-document",
	}
	c.Fee = nil
	return c
}

// pendingClaimsV3Clear has no buyer location, no chain verification and no
// invoice: what a record in manual review signs.
func pendingClaimsV3Clear(n int) Claims {
	c := sampleClaimsV3Clear(n)
	c.ReviewStatus = ReviewPending
	c.ReviewReasons = []string{"consumer_country_missing: no attested customer country, VAT not determined"}
	c.Buyer = Buyer{}
	c.Classification = &Classification{Status: "manual_review", Reasons: []string{"place of supply unknown (Art. 58 needs the customer's location)"}}
	c.FX.NetEUR, c.FX.VATEUR, c.FX.NetEURExact, c.FX.VATEURExact = "", "", "", ""
	c.FXTaxCurrency = nil
	c.Settlement.Chain = ChainFacts{Verification: ChainNotPerformed}
	c.Settlement.LogIndex = nil
	c.Invoice = nil
	c.RecordSHA256 = ""
	return c
}

// conceal is Conceal with the deterministic salt source of seed.
func conceal(t testing.TB, clear Claims, seed byte) (Claims, []Opening) {
	t.Helper()
	public, openings, err := Conceal(clear, testRand(seed))
	if err != nil {
		t.Fatalf("conceal: %v", err)
	}
	return public, openings
}
