package receipt

import (
	"errors"
	"testing"
)

// TestSignRefusesInvalidClaims: each rule of doc.go "# Claims", broken once;
// Sign must refuse with a *ClaimsError naming the field.
func TestSignRefusesInvalidClaims(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	for _, tc := range []struct {
		name   string
		mutate func(c *Claims)
		field  string // "" = valid
	}{
		{"sample is valid", func(c *Claims) {}, ""},
		{"spec unknown", func(c *Claims) { c.Spec = "service.receipt/4.0.0" }, "/spec"},
		{"event id without x402-", func(c *Claims) { c.EventID, c.ReceiptID = "abc", "rcpt_abc" }, "/event_id"},
		{"event id with space", func(c *Claims) { c.EventID, c.ReceiptID = "x402-a b", "rcpt_x402-a b" }, "/event_id"},
		{"receipt id not derived", func(c *Claims) { c.ReceiptID = "rcpt_x402-other" }, "/receipt_id"},
		{"iat zero", func(c *Claims) { c.IssuedAt = 0 }, "/iat"},
		{"environment staging", func(c *Claims) { c.Environment = "staging" }, "/environment"},
		{"production with watermark", func(c *Claims) { c.Watermark = SandboxWatermark }, "/watermark"},
		{"sandbox without watermark", func(c *Claims) { c.Environment = EnvSandbox }, "/watermark"},
		{"sandbox with other watermark", func(c *Claims) { c.Environment, c.Watermark = EnvSandbox, "TEST" }, "/watermark"},
		{"sandbox with watermark", func(c *Claims) { c.Environment, c.Watermark = EnvSandbox, SandboxWatermark }, ""},
		{"custody held", func(c *Claims) { c.Custody = "held" }, "/custody"},
		{"custody empty", func(c *Claims) { c.Custody = "" }, "/custody"},
		{"v1 uk-vat", func(c *Claims) { c.Jurisdiction, c.Ruleset = JurisdictionUKVAT, "uk-vat-2026.09" }, "/jurisdiction"},
		{"ruleset of another jurisdiction", func(c *Claims) { c.Ruleset = "uk-vat-2026.09" }, "/ruleset"},
		{"review status lower case", func(c *Claims) { c.ReviewStatus = "processed" }, "/review_status"},
		{"processed with reasons", func(c *Claims) { c.ReviewReasons = []string{"x"} }, "/review_reasons"},
		{"pending without reasons", func(c *Claims) { c.ReviewStatus = ReviewPending }, "/review_reasons"},
		{"pending with empty reason", func(c *Claims) { c.ReviewStatus, c.ReviewReasons = ReviewPending, []string{""} }, "/review_reasons/0"},
		{"supersedes itself", func(c *Claims) { c.Supersedes = c.ReceiptID }, "/supersedes"},
		{"supersedes not a receipt id", func(c *Claims) { c.Supersedes = "x402-1" }, "/supersedes"},
		{"supersedes another", func(c *Claims) { c.Supersedes = "rcpt_x402-earlier" }, ""},
		{"network not CAIP-2", func(c *Claims) { c.Settlement.Network = "base" }, "/settlement/network"},
		{"tx hash upper case", func(c *Claims) {
			c.Settlement.TxHash = "0x4A1F0C3B2E5D6F7A8B9C0D1E2F3A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C"
		}, "/settlement/tx_hash"},
		{"tx hash short", func(c *Claims) { c.Settlement.TxHash = "0x4a1f" }, "/settlement/tx_hash"},
		{"non-EVM network, opaque ids", func(c *Claims) {
			c.Settlement.Network, c.Settlement.TxHash, c.Settlement.Payer, c.Settlement.Receiver = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW", "A", "B"
			c.Settlement.AssetContract = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
		}, ""},
		{"negative log index", func(c *Claims) { c.Settlement.LogIndex = ptr(int64(-1)) }, "/settlement/log_index"},
		{"asset missing", func(c *Claims) { c.Settlement.Asset = "" }, "/settlement/asset"},
		{"amount with 7 decimals", func(c *Claims) { c.Settlement.AmountUSDC, c.FX.AmountUSDC = "1.0000001", "1.0000001" }, "/settlement/amount_usdc"},
		{"amount negative", func(c *Claims) { c.Settlement.AmountUSDC, c.FX.AmountUSDC = "-1", "-1" }, "/settlement/amount_usdc"},
		{"amount with exponent", func(c *Claims) { c.Settlement.AmountUSDC, c.FX.AmountUSDC = "1e2", "1e2" }, "/settlement/amount_usdc"},
		{"amount with leading zero", func(c *Claims) { c.Settlement.AmountUSDC, c.FX.AmountUSDC = "012.1", "012.1" }, "/settlement/amount_usdc"},
		{"payer not an address", func(c *Claims) { c.Settlement.Payer = "alice" }, "/settlement/payer"},
		{"payer EIP-55 case kept", func(c *Claims) { c.Settlement.Payer = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" }, ""},
		{"timestamp with offset", func(c *Claims) { c.Settlement.Timestamp = "2026-09-15T11:58:12+02:00" }, "/settlement/timestamp"},
		{"timestamp date only", func(c *Claims) { c.Settlement.Timestamp = "2026-09-15" }, "/settlement/timestamp"},
		{"timestamp fractional", func(c *Claims) { c.Settlement.Timestamp = "2026-09-15T09:58:12.250Z" }, ""},
		{"chain verification unknown", func(c *Claims) { c.Settlement.Chain.Verification = "yes" }, "/settlement/chain/verification"},
		{"chain verified without block", func(c *Claims) { c.Settlement.Chain.BlockNumber = 0 }, "/settlement/chain/block_number"},
		{"chain verified without finality", func(c *Claims) { c.Settlement.Chain.Finalized = nil }, "/settlement/chain/finalized"},
		{"chain verified without confirmations", func(c *Claims) { c.Settlement.Chain.Confirmations = 0 }, "/settlement/chain/confirmations"},
		{"chain not performed with facts", func(c *Claims) { c.Settlement.Chain.Verification = ChainNotPerformed }, "/settlement/chain"},
		{"seller without name", func(c *Claims) { c.Seller.LegalName = "" }, "/seller/legal_name"},
		{"seller country lower case", func(c *Claims) { c.Seller.Country = "de" }, "/seller/country"},
		{"buyer country alpha-3", func(c *Claims) { c.Buyer.Country = "FRA" }, "/buyer/country"},
		{"registry without checked_at", func(c *Claims) {
			c.Buyer.Registry = &RegistryProof{Registry: "vies", Status: "valid", Number: "FR12345678901"}
		}, "/buyer/registry/checked_at"},
		{"classification without status", func(c *Claims) { c.Classification.Status = "" }, "/classification/status"},
		{"rate as percent sign", func(c *Claims) { c.Classification.RatePercent = "20%" }, "/classification/rate_percent"},
		{"rate effective date malformed", func(c *Claims) { c.Classification.RateEffectiveFrom = "2014-1-1" }, "/classification/rate_effective_from"},
		{"fx pair reversed", func(c *Claims) { c.FX.Pair = "EUR/USDC" }, "/fx/pair"},
		{"fx amount differs from settlement", func(c *Claims) { c.FX.AmountUSDC = "12.1" }, "/fx/amount_usdc"},
		{"fx rate date impossible", func(c *Claims) { c.FX.USDPerEUR.RateDate = "2026-02-30" }, "/fx/usd_per_eur/rate_date"},
		{"fx raw rate missing", func(c *Claims) { c.FX.USDPerEUR.Raw = "" }, "/fx/usd_per_eur/raw"},
		{"fx gross with 3 decimals", func(c *Claims) { c.FX.GrossEUR = "10.330" }, "/fx/gross_eur"},
		{"fx net without vat", func(c *Claims) { c.FX.VATEUR = "" }, "/fx"},
		{"fx net + vat != gross", func(c *Claims) { c.FX.VATEUR = "1.73" }, "/fx"},
		{"fx pending without net and vat", func(c *Claims) { c.FX.NetEUR, c.FX.VATEUR = "", "" }, ""},
		{"fx large amounts add up (decimal path)", func(c *Claims) {
			c.Settlement.AmountUSDC, c.FX.AmountUSDC = "1445811.000000", "1445811.000000"
			c.FX.GrossEUR, c.FX.NetEUR, c.FX.VATEUR = "1234567.89", "1028806.58", "205761.31"
		}, ""},
		{"fx large amounts do not add up", func(c *Claims) {
			c.FX.GrossEUR, c.FX.NetEUR, c.FX.VATEUR = "1234567.89", "1028806.58", "205761.30"
		}, "/fx"},
		{"fx zero net, negative vat", func(c *Claims) { c.FX.GrossEUR, c.FX.NetEUR, c.FX.VATEUR = "-1.00", "0.00", "-1.00" }, ""},
		{"fx_gbp on v1", func(c *Claims) { c.FXGBP = sampleClaimsV2(0).FXGBP }, "/fx_gbp"},
		{"credit with negative amounts", func(c *Claims) {
			c.Supersedes = "rcpt_x402-earlier"
			c.FX.GrossEUR, c.FX.NetEUR, c.FX.VATEUR = "-10.33", "-8.61", "-1.72"
		}, ""},
		{"invoice hash upper case", func(c *Claims) {
			c.Invoice.UBLSHA256 = "5E884898DA28047151D0E56F8DC6292773603D0D6AABBDD62A11EF721D1542D8"
		}, "/invoice/ubl_sha256"},
		{"fee model flat", func(c *Claims) { c.Fee.Model = "flat" }, "/fee/model"},
		{"fee accrued without cents", func(c *Claims) { c.Fee.AccruedEUR = "0" }, "/fee/accrued_eur"},
		{"log origin with space", func(c *Claims) { c.Log.Origin = "ledger example" }, "/log/origin"},
		{"log origin with plus", func(c *Claims) { c.Log.Origin = "ledger+example" }, "/log/origin"},
		{"log index negative", func(c *Claims) { c.Log.Index = -1 }, "/log/index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sampleClaims(0)
			tc.mutate(&c)
			jws, err := s.Sign(c)
			var ce *ClaimsError
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("valid claims refused: %v", err)
			case tc.field != "" && !errors.As(err, &ce):
				t.Errorf("signed (%d bytes) or wrong error %v; want a ClaimsError at %s", len(jws), err, tc.field)
			case tc.field != "" && (ce.Field != tc.field || !errors.Is(err, ErrInvalidClaims)):
				t.Errorf("error at %s (%v), want %s", ce.Field, err, tc.field)
			}
		})
	}
}

func TestSignV2Rules(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	for _, tc := range []struct {
		name   string
		mutate func(c *Claims)
		field  string
	}{
		{"sample is valid", func(c *Claims) {}, ""},
		{"v2 without any conversion", func(c *Claims) { c.FXGBP = nil }, ""},
		{"v2 with EUR and GBP", func(c *Claims) { c.FX = sampleClaims(0).FX }, ""},
		{"v2 eu-vat", func(c *Claims) { c.Jurisdiction, c.Ruleset = JurisdictionEUVAT, "eu-vat-oss-2026.09" }, "/jurisdiction"},
		{"v2 gbp pair wrong", func(c *Claims) { c.FXGBP.Pair = "USDC/EUR" }, "/fx_gbp/pair"},
		{"v2 gbp arithmetic", func(c *Claims) { c.FXGBP.NetGBP = "7.46" }, "/fx_gbp"},
	} {
		c := sampleClaimsV2(0)
		tc.mutate(&c)
		_, err := s.Sign(c)
		var ce *ClaimsError
		if tc.field == "" && err != nil || tc.field != "" && (!errors.As(err, &ce) || ce.Field != tc.field) {
			t.Errorf("%s: %v, want field %q", tc.name, err, tc.field)
		}
	}
}

func TestNewSignerRejectsBadKeys(t *testing.T) {
	good := seedKey(1)
	corrupt := append(ed25519PrivateKeyCopy(good)[:32:32], make([]byte, 32)...)
	for name, k := range map[string][]byte{"short": good[:32], "public half corrupted": corrupt, "nil": nil} {
		if _, err := NewSigner(k); err == nil {
			t.Errorf("%s key accepted", name)
		}
	}
}

func ed25519PrivateKeyCopy(k []byte) []byte { return append([]byte(nil), k...) }
