package returns_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
)

// TestReturnsProperty: for random sales and refunds over three quarters,
// every entry is summed by exactly one return (in a line, a correction, a
// non-OSS summary or the pending bucket), the USDC of all returns equals
// the records' USDC net of refunds exactly, and every line's EUR figures
// are its USDC total at that quarter's period-end rate (a correction's at
// its original quarter's), to the cent, computed here with exact
// rationals.
func TestReturnsProperty(t *testing.T) {
	countries := []string{"DE", "FR", "IT", "ES", "NL", "AT", "BE", "PL", "SE", "FI", "PT", "GR", "IE", ""}
	kinds := []string{"", "", "ebook", "saas"}
	quarters := []returns.Period{{Year: 2025, Quarter: 3}, {Year: 2025, Quarter: 4}, {Year: 2026, Quarter: 1}}
	from := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 3, 31, 20, 0, 0, 0, time.UTC) // before midnight in every EU zone
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 20))
			b, setClock := newBooksClock(t, from)
			var sales []sale
			total := new(big.Rat)
			for i := 0; i < 40; i++ {
				c := countries[r.IntN(len(countries))]
				s := sale{country: c, kind: kinds[r.IntN(len(kinds))]}
				if c == "FR" && r.IntN(4) == 0 {
					s.vatNumber = "FR40303265045" // a business: reverse charge
				}
				s.amount = fmt.Sprintf("%d.%06d", r.IntN(2000), r.IntN(1000000))
				if s.amount == "0.000000" {
					s.amount = "0.010000"
				}
				at := from.Add(time.Duration(r.Int64N(int64(to.Sub(from)))))
				s.at = at.Format(time.RFC3339)
				sales = append(sales, s)
				total.Add(total, rat(t, s.amount))
			}
			// The timeline: each sale recorded a minute after it settled,
			// and a refund of about a third of them (part or all) at a
			// later moment, so refunds fall in the sale's quarter or a
			// later one.
			type event struct {
				at     time.Time
				sale   int
				refund string // "" for the sale itself; "all" or an amount
			}
			var events []event
			for i, s := range sales {
				at, _ := time.Parse(time.RFC3339, s.at)
				events = append(events, event{at: at.Add(time.Minute), sale: i})
				if s.country != "" && r.IntN(3) == 0 {
					when := at.Add(2*time.Minute + time.Duration(r.Int64N(int64(to.Sub(at)))))
					amt := "all"
					if r.IntN(2) == 0 {
						amt = rat(t, s.amount).Mul(rat(t, s.amount), big.NewRat(int64(1+r.IntN(99)), 100)).FloatString(6)
					}
					events = append(events, event{at: when, sale: i, refund: amt})
				}
			}
			sort.Slice(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
			recs := make([]*fiscal.Record, len(sales))
			refunds := 0
			for _, ev := range events {
				setClock(ev.at)
				if ev.refund == "" {
					recs[ev.sale] = settle(t, b, int(seed)*1000+ev.sale, sales[ev.sale])[0]
					continue
				}
				amt := ev.refund
				if amt == "all" {
					amt = ""
				}
				if amt == "0.000000" {
					continue
				}
				rf := refund(t, b, recs[ev.sale].ID, amt, fmt.Sprintf("refund-%d", ev.sale))
				total.Sub(total, rat(t, rf.AmountUSDC))
				refunds++
			}
			setClock(testNow)
			seen := map[int64]string{}
			corrections := 0
			sum := new(big.Rat)
			mark := func(q returns.Period, idx []int64) {
				for _, i := range idx {
					if prev, dup := seen[i]; dup {
						t.Fatalf("ledger index %d in %s and %s", i, prev, q)
					}
					seen[i] = q.String()
				}
			}
			for _, q := range quarters {
				ret, _, err := returns.OSS(context.Background(), b, q, returns.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if ret.FX.Rate == nil {
					t.Fatalf("%s: no period-end rate", q)
				}
				usdPerEUR := rat(t, ret.FX.Rate.Raw)
				for _, l := range ret.Lines {
					mark(q, l.LedgerIndexes)
					u := rat(t, l.AmountUSDC)
					sum.Add(sum, u)
					gross := new(big.Rat).Quo(u, usdPerEUR)
					pct := rat(t, l.RatePercent)
					net := new(big.Rat).Quo(new(big.Rat).Mul(gross, big.NewRat(100, 1)), new(big.Rat).Add(pct, big.NewRat(100, 1)))
					if l.TaxableAmountEUR != cents(net) || l.VATEUR != cents(new(big.Rat).Sub(gross, net)) {
						t.Errorf("%s line %s %s: %s + %s EUR for %s USDC at %s; want %s + %s", q, l.MemberState, l.RatePercent,
							l.TaxableAmountEUR, l.VATEUR, l.AmountUSDC, ret.FX.Rate.Raw, cents(net), cents(new(big.Rat).Sub(gross, net)))
					}
				}
				corrections += len(ret.Corrections)
				for _, c := range ret.Corrections {
					mark(q, c.LedgerIndexes)
					u := rat(t, c.AmountUSDC)
					sum.Add(sum, u)
					if c.USDPerEUR == nil {
						t.Fatalf("%s correction without a rate", q)
					}
					gross := new(big.Rat).Quo(u, rat(t, c.USDPerEUR.Raw))
					pct := rat(t, c.RatePercent)
					net := new(big.Rat).Quo(new(big.Rat).Mul(gross, big.NewRat(100, 1)), new(big.Rat).Add(pct, big.NewRat(100, 1)))
					if c.TaxableAmountEUR != cents(net) || c.VATEUR != cents(new(big.Rat).Sub(gross, net)) {
						t.Errorf("%s correction %s %s %s: %s + %s EUR; want %s + %s", q, c.OriginalPeriod, c.MemberState, c.RatePercent,
							c.TaxableAmountEUR, c.VATEUR, cents(net), cents(new(big.Rat).Sub(gross, net)))
					}
					if c.OriginalPeriod >= q.String() {
						t.Errorf("%s: a correction of %s", q, c.OriginalPeriod)
					}
				}
				for _, s := range ret.NotInOSS {
					mark(q, s.LedgerIndexes)
					sum.Add(sum, rat(t, s.AmountUSDC))
				}
				mark(q, ret.Excluded.Pending.LedgerIndexes)
				sum.Add(sum, rat(t, ret.Excluded.Pending.AmountUSDC))
				if len(ret.FixedEstablishments) != 0 || ret.Excluded.OtherScheme.Records != 0 {
					t.Fatalf("%s: unexpected sections %+v", q, ret)
				}
			}
			if len(seen) != len(recs)+refunds {
				t.Fatalf("%d of %d entries (%d sales, %d refunds) are in a return", len(seen), len(recs)+refunds, len(recs), refunds)
			}
			t.Logf("%d sales, %d refunds, %d corrections", len(recs), refunds, corrections)
			if refunds == 0 || corrections == 0 {
				t.Fatal("no refunds drawn")
			}
			if sum.Cmp(total) != 0 {
				t.Fatalf("the returns sum %s USDC, the records %s", sum.FloatString(6), total.FloatString(6))
			}
		})
	}
}
