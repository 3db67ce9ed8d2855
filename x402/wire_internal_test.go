package x402

import (
	"encoding/base64"
	"math/big"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestAtomicToUSDC(t *testing.T) {
	for _, c := range []struct{ atomic, usdc string }{
		{"1", "0.000001"},
		{"10", "0.00001"},
		{"10000", "0.01"},
		{"999999", "0.999999"},
		{"1000000", "1"},
		{"1500000", "1.5"},
		{"1190000", "1.19"},
		{"11900000", "11.9"},
		{"100000001", "100.000001"},
		{"999999999999999999", "999999999999.999999"},
		{"123456789012345678901234567890", "123456789012345678901234.56789"},
	} {
		a, _ := new(big.Int).SetString(c.atomic, 10)
		if got := AtomicToUSDC(a); got != c.usdc {
			t.Errorf("AtomicToUSDC(%s) = %s, want %s", c.atomic, got, c.usdc)
		}
	}
}

// FuzzAtomicToUSDC: the decimal rendering reads back as the same number of
// atomic units, with at most 6 decimals and no trailing zero.
func FuzzAtomicToUSDC(f *testing.F) {
	for _, s := range []string{"1", "1000000", "1500000", "123456789", "999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := new(big.Int).SetString(s, 10)
		if !ok || a.Sign() <= 0 {
			return
		}
		got := AtomicToUSDC(a)
		d, err := decimal.NewFromString(got)
		if err != nil {
			t.Fatalf("%s → %q: %v", s, got, err)
		}
		if d.Shift(6).BigInt().Cmp(a) != 0 || !d.Shift(6).IsInteger() {
			t.Fatalf("%s → %s does not read back", s, got)
		}
		if _, frac, ok := strings.Cut(got, "."); ok && (len(frac) > 6 || strings.HasSuffix(frac, "0")) {
			t.Fatalf("%s → %s: fraction %q", s, got, frac)
		}
	})
}

// FuzzParse: any three documents either fail with an *Error or give a
// normalised payment that the rest of the engine can rely on.
func FuzzParse(f *testing.F) {
	tx := "0x" + strings.Repeat("ab", 32)
	settle := `{"success":true,"payer":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","transaction":"` + tx + `","network":"eip155:8453"}`
	req := `{"scheme":"exact","network":"eip155:8453","amount":"1500000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}`
	payload := `{"x402Version":2,"accepted":` + req + `,"payload":{"signature":"0x","authorization":{"from":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","to":"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc","value":"1500000","validAfter":"0","validBefore":"9999999999","nonce":"0x` + strings.Repeat("01", 32) + `"}}}`
	v1req := `{"scheme":"exact","network":"base","maxAmountRequired":"10000","resource":"https://x.example/r","asset":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913","payTo":"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"}`
	f.Add([]byte(settle), []byte(req), []byte(payload))
	f.Add([]byte(base64.StdEncoding.EncodeToString([]byte(settle))), []byte(nil), []byte(base64.RawURLEncoding.EncodeToString([]byte(payload))))
	f.Add([]byte(`{"success":false,"errorReason":"settlement_pending","transaction":"`+tx+`","network":"base","payer":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8"}`), []byte(v1req), []byte(nil))
	f.Add([]byte(`{"success":true}`), []byte(`"e30="`), []byte(`null`))
	f.Fuzz(func(t *testing.T, s, r, p []byte) {
		in, _, err := Parse(Settlement{s, r, p})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		if !hash32RE.MatchString(in.TxHash) || in.TxHash != strings.ToLower(in.TxHash) {
			t.Fatalf("tx hash %q", in.TxHash)
		}
		if !caip2RE.MatchString(in.Network) {
			t.Fatalf("network %q", in.Network)
		}
		if !atomicRE.MatchString(in.AmountAtomic) || in.AmountAtomic == "0" || len(in.AmountAtomic) > MaxAtomicDigits {
			t.Fatalf("amount %q", in.AmountAtomic)
		}
		for _, a := range []string{in.Payer, in.PayTo, in.Asset} {
			if !addressRE.MatchString(a) || a != strings.ToLower(a) {
				t.Fatalf("address %q", a)
			}
		}
		if in.Version != 1 && in.Version != 2 {
			t.Fatalf("version %d", in.Version)
		}
		if len(in.ResourceURL) > maxResourceURL {
			t.Fatalf("resource url of %d bytes", len(in.ResourceURL))
		}
	})
}

// BenchmarkParse parses and validates the three x402 documents of one
// settlement (the work an enqueue does before its one write).
func BenchmarkParse(b *testing.B) {
	tx := "0x" + strings.Repeat("ab", 32)
	settle := []byte(`{"success":true,"payer":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","transaction":"` + tx + `","network":"eip155:8453"}`)
	req := `{"scheme":"exact","network":"eip155:8453","amount":"1500000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}`
	payload := []byte(`{"x402Version":2,"resource":{"url":"https://api.example.com/x"},"accepted":` + req + `,"payload":{"signature":"0x","authorization":{"from":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","to":"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc","value":"1500000","validAfter":"0","validBefore":"9999999999","nonce":"0x` + strings.Repeat("01", 32) + `"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(Settlement{settle, []byte(req), payload}); err != nil {
			b.Fatal(err)
		}
	}
}
