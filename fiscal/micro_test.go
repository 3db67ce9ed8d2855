package fiscal_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestMicropaymentsKeepTheirVAT: the table (an Irish OSS seller's
// sales to a German consumer on 2026-04-10). Each record keeps a non-zero
// exact VAT, although the cent figures of a single document may be 0.00.
func TestMicropaymentsKeepTheirVAT(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		for i, amount := range []string{"0.001", "0.005", "0.01", "0.04", "0.05", "0.000001"} {
			res, err := b.Settle(context.Background(), fiscaltest.Request(i, amount, "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Record
			checkAmounts(t, r)
			v := decimal.RequireFromString(r.FX.VATEURExact)
			n := decimal.RequireFromString(r.FX.NetEURExact)
			if !v.IsPositive() || !n.IsPositive() {
				t.Errorf("%s USDC: exact net %s, VAT %s: the tax vanished", amount, r.FX.NetEURExact, r.FX.VATEURExact)
			}
			t.Logf("%-9s USDC  gross %s (%s)  net %s (%s)  VAT %s (%s)", amount, r.FX.GrossEUR, r.FX.GrossEURExact, r.FX.NetEUR, r.FX.NetEURExact, r.FX.VATEUR, r.FX.VATEURExact)
		}
	})
}

// TestThousandCallsAddUp: 1,000 payments of 0.04 USDC to Germany. The sum
// of their exact VAT, rounded once, equals to the cent the VAT this test
// computes itself on the summed amount at the ECB rate (about EUR 5.45),
// while the sum of the documents' cent VAT does not.
func TestThousandCallsAddUp(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		if testing.Short() {
			t.Skip("1,000 fsynced settlements")
		}
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		var exactVAT, centVAT decimal.Decimal
		var rate, pct decimal.Decimal
		for i := 0; i < 1000; i++ {
			res, err := b.Settle(context.Background(), fiscaltest.Request(i, "0.04", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Record
			exactVAT = exactVAT.Add(decimal.RequireFromString(r.FX.VATEURExact))
			centVAT = centVAT.Add(decimal.RequireFromString(r.FX.VATEUR))
			rate, pct = decimal.RequireFromString(r.FX.USDPerEUR.Raw), r.Classification.RatePercent.Decimal()
		}
		gross := decimal.RequireFromString("40").DivRound(rate, 12) // 1,000 × 0.04 USDC
		want := gross.Sub(gross.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(100).Add(pct), 12)).Round(2)
		if !exactVAT.Round(2).Equal(want) {
			t.Fatalf("sum of exact VAT %s, VAT on the summed amount %s", exactVAT.Round(2), want)
		}
		t.Logf("1,000 × 0.04 USDC: VAT on the total %s EUR = sum of exact VAT %s; sum of the documents' cent VAT %s", want, exactVAT.Round(2), centVAT)
	})
}

// TestExactSplitProperty: over random amounts from 0.000001 to 10,000 USDC
// and random member states' rates, the sum of n exact VATs equals the VAT
// on the summed exact net within n × 10⁻¹⁰ EUR, and every cent figure is
// within half a cent of its exact value (gross, VAT) or a cent (net).
func TestExactSplitProperty(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		rnd := rand.New(rand.NewPCG(15, 15))
		countries := vat.Rates().Countries()
		runs := 300
		if testing.Short() {
			runs = 60
		}
		byRate := map[string][2]decimal.Decimal{} // rate → (Σ exact VAT, Σ exact net)
		counts := map[string]int{}
		half, cent := decimal.RequireFromString("0.005"), decimal.RequireFromString("0.01")
		for i := 0; i < runs; i++ {
			micro := rnd.Int64N(10_000_000_000) + 1 // 0.000001 .. 10,000 USDC
			amount := decimal.New(micro, -6).String()
			cc := countries[rnd.IntN(len(countries))]
			if cc == "GB" {
				cc = "DE"
			}
			res, err := b.Settle(context.Background(), fiscaltest.Request(1000+i, amount, cc, "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Record
			if r.ReviewStatus != fiscal.StatusProcessed {
				continue
			}
			checkAmounts(t, r)
			g, n, v := dec(r.FX.GrossEURExact), dec(r.FX.NetEURExact), dec(r.FX.VATEURExact)
			if !n.Add(v).Equal(g) {
				t.Fatalf("%s: net %s + VAT %s ≠ gross %s", amount, n, v, g)
			}
			if dec(r.FX.GrossEUR).Sub(g).Abs().GreaterThan(half) || dec(r.FX.VATEUR).Sub(v).Abs().GreaterThan(half) || dec(r.FX.NetEUR).Sub(n).Abs().GreaterThan(cent) {
				t.Fatalf("%s: cent figures %s/%s/%s stray from the exact %s/%s/%s", amount, r.FX.GrossEUR, r.FX.NetEUR, r.FX.VATEUR, g, n, v)
			}
			key := r.Classification.RatePercent.Decimal().String()
			s := byRate[key]
			byRate[key] = [2]decimal.Decimal{s[0].Add(v), s[1].Add(n)}
			counts[key]++
		}
		for key, s := range byRate {
			pct := dec(key)
			onNet := s[1].Mul(pct).Div(decimal.NewFromInt(100))
			tol := decimal.New(int64(counts[key]), -10)
			if s[0].Sub(onNet).Abs().GreaterThan(tol) {
				t.Errorf("rate %s%%: Σ exact VAT %s, VAT on Σ exact net %s: off by more than %s", key, s[0], onNet, tol)
			}
		}
		t.Logf("%d settlements over %d rates", runs, len(byRate))
	})
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }
